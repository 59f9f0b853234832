r"""Pretraining speed and memory on this machine, on synthetic inputs.

  python tools/benchmark_train.py --gin_file=gin/base.gin --batch_size=32 \
      --seq_length=128 [--steps=5] [--json]

Times whole optimizer steps of the real training loop (`official.core.trainer`:
forward, backward, LAMB, clipping) after warm-up, with and without XLA, each
variant in a fresh process so its peak RSS is its own. In the same run it
measures this machine's float32 matrix-multiply rate (the ceiling for achieved
GFLOP/s) and, when `torch` and `transformers` are importable, the same shapes
through Hugging Face's PyTorch `AlbertForPreTraining` with AdamW as a baseline.
"""

import json
import os
import resource
import subprocess
import sys
import tempfile
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags

GIN_FILES = flags.DEFINE_multi_string("gin_file", ["gin/base.gin"],
                                      "Model size gin files, layered.")
GIN_PARAMS = flags.DEFINE_multi_string("gin_param", [], "Extra gin bindings.")
BATCH = flags.DEFINE_integer("batch_size", 32, "Examples per step.")
SEQ = flags.DEFINE_integer("seq_length", 128, "Tokens per example.")
PREDICTIONS = flags.DEFINE_integer("max_predictions_per_seq", 20,
                                   "Masked positions per example.")
STEPS = flags.DEFINE_integer("steps", 5, "Timed steps per variant.")
WARMUP = flags.DEFINE_integer("warmup_steps", 2, "Untimed steps first.")
JSON = flags.DEFINE_bool("json", False, "Print one JSON object.")
TORCH = flags.DEFINE_bool("torch", True,
                          "Also measure transformers' PyTorch model if present.")
VARIANT = flags.DEFINE_enum("variant", None, ["tf", "tf_xla", "torch"],
                            "Internal: run one variant in this process.")


def _peak_rss_mb() -> float:
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _config():
  from albert.config import AlbertConfig  # pylint: disable=g-import-not-at-top
  from official.config import gin_files  # pylint: disable=g-import-not-at-top
  gin_files.parse_gin(GIN_FILES.value, GIN_PARAMS.value, search_paths=[REPO_ROOT])
  return AlbertConfig()


def _synthetic_batch(config, batch_size):
  import numpy as np  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(0)
  shape = (batch_size, SEQ.value)
  positions = np.sort(np.stack([
      rng.choice(np.arange(1, SEQ.value), PREDICTIONS.value, replace=False)
      for _ in range(batch_size)]), axis=1)
  return {
      "input_word_ids": rng.integers(5, config.vocab_size, shape, np.int32),
      "input_mask": np.ones(shape, np.int32),
      "input_type_ids": (np.arange(SEQ.value) >= SEQ.value // 2).astype(
          np.int32)[None].repeat(batch_size, 0),
      "masked_lm_positions": positions.astype(np.int32),
      "masked_lm_ids": rng.integers(5, config.vocab_size,
                                    positions.shape).astype(np.int32),
      "masked_lm_weights": np.ones(positions.shape, np.float32),
      "sentence_order_label": rng.integers(0, 2, batch_size).astype(np.int32),
  }


def run_tf(xla: bool) -> dict:
  """Times the real Trainer step on synthetic in-memory batches."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from albert.pretrain_task import PretrainTask  # pylint: disable=g-import-not-at-top
  from official.core.trainer import Trainer  # pylint: disable=g-import-not-at-top
  from official.core.trainer_config import TrainerConfig  # pylint: disable=g-import-not-at-top
  from official.distribute.strategy import make_strategy  # pylint: disable=g-import-not-at-top
  from official.optimization.optimizer_config import OptimizerConfig  # pylint: disable=g-import-not-at-top

  config = _config()

  class SyntheticPretrainTask(PretrainTask):
    """The pretraining task fed by one repeated in-memory batch."""

    def build_inputs(self, input_context, *, training, batch_size,
                     skip_examples=0):
      del input_context, training, skip_examples
      batch = _synthetic_batch(config, batch_size)
      return tf.data.Dataset.from_tensors(batch).repeat()

  task = SyntheticPretrainTask(
      train_file_pattern="synthetic", global_batch_size=BATCH.value,
      seq_length=SEQ.value, max_predictions_per_seq=PREDICTIONS.value,
      model_config=config)
  with tempfile.TemporaryDirectory() as model_dir:
    trainer = Trainer(task=task, strategy=make_strategy("default"),
                      optimizer_config=OptimizerConfig(),
                      config=TrainerConfig(train_steps=10**6, jit_compile=xla),
                      model_dir=model_dir)
    iterator = trainer.train_iterator()
    trainer.run_steps(iterator, WARMUP.value)
    start = time.perf_counter()
    loss, _ = trainer.run_steps(iterator, STEPS.value)
    seconds = time.perf_counter() - start
  return {"examples_per_s": STEPS.value * BATCH.value / seconds,
          "seconds_per_step": seconds / STEPS.value, "loss": loss,
          "peak_rss_mb": _peak_rss_mb()}


def run_torch() -> dict:
  """transformers' AlbertForPreTraining + AdamW at the same shapes."""
  import torch  # pylint: disable=g-import-not-at-top
  import transformers  # pylint: disable=g-import-not-at-top
  config = _config()
  batch = {k: torch.from_numpy(v).long() if v.dtype != "float32" else
           torch.from_numpy(v) for k, v in _synthetic_batch(config, BATCH.value).items()}
  hf_config = transformers.AlbertConfig(
      vocab_size=config.vocab_size, embedding_size=config.embedding_size,
      hidden_size=config.hidden_size, num_hidden_layers=config.num_layers,
      num_attention_heads=config.num_heads,
      intermediate_size=config.intermediate_size, hidden_act="gelu_new",
      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
      max_position_embeddings=config.max_position_embeddings)
  model = transformers.AlbertForPreTraining(hf_config)
  optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
  labels = torch.full_like(batch["input_word_ids"], -100)
  labels.scatter_(1, batch["masked_lm_positions"], batch["masked_lm_ids"])

  def step():
    optimizer.zero_grad()
    out = model(input_ids=batch["input_word_ids"],
                attention_mask=batch["input_mask"],
                token_type_ids=batch["input_type_ids"], labels=labels,
                sentence_order_label=batch["sentence_order_label"])
    out.loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return float(out.loss)

  for _ in range(WARMUP.value):
    step()
  start = time.perf_counter()
  for _ in range(STEPS.value):
    loss = step()
  seconds = time.perf_counter() - start
  return {"examples_per_s": STEPS.value * BATCH.value / seconds,
          "seconds_per_step": seconds / STEPS.value, "loss": loss,
          "peak_rss_mb": _peak_rss_mb(),
          "torch_threads": torch.get_num_threads()}


def matmul_gflops(n: int = 2048, reps: int = 20) -> float:
  """This machine's float32 matrix-multiply rate through TensorFlow."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  a = tf.random.normal([n, n])
  b = tf.random.normal([n, n])

  @tf.function
  def chain(x):
    for _ in range(reps):
      x = tf.matmul(x, b) * 1e-3
    return x

  chain(a).numpy()
  start = time.perf_counter()
  chain(a).numpy()
  return 2.0 * n ** 3 * reps / (time.perf_counter() - start) / 1e9


def _torch_available() -> bool:
  probe = subprocess.run(
      [sys.executable, "-c", "import torch, transformers"],
      capture_output=True)
  return probe.returncode == 0


def _run_variant(name: str) -> dict:
  args = [sys.executable, os.path.abspath(__file__), f"--variant={name}",
          f"--batch_size={BATCH.value}", f"--seq_length={SEQ.value}",
          f"--max_predictions_per_seq={PREDICTIONS.value}",
          f"--steps={STEPS.value}", f"--warmup_steps={WARMUP.value}"]
  args += [f"--gin_file={f}" for f in GIN_FILES.value]
  args += [f"--gin_param={p}" for p in GIN_PARAMS.value]
  print(f"benchmark_train: running {name} ...", file=sys.stderr, flush=True)
  run = subprocess.run(args, capture_output=True, text=True, cwd=REPO_ROOT)
  if run.returncode != 0:
    sys.exit(f"benchmark_train: variant {name} failed: "
             f"{(run.stderr.strip().splitlines() or ['?'])[-1]}")
  return json.loads(run.stdout.strip().splitlines()[-1])


def main(argv):
  del argv
  if VARIANT.value:
    result = {"tf": lambda: run_tf(False), "tf_xla": lambda: run_tf(True),
              "torch": run_torch}[VARIANT.value]()
    print(json.dumps(result))
    return
  from albert import flops  # pylint: disable=g-import-not-at-top
  try:
    config = _config()
  except ValueError as e:
    sys.exit(f"benchmark_train: {str(e).splitlines()[0]}")
  flops_per_example = flops.training_flops_per_example(
      config, SEQ.value, PREDICTIONS.value)
  variants = {name: _run_variant(name) for name in ("tf", "tf_xla")}
  if TORCH.value and _torch_available():
    variants["torch"] = _run_variant("torch")
  peak = matmul_gflops()
  best_name = max(("tf", "tf_xla"), key=lambda n: variants[n]["examples_per_s"])
  best = variants[best_name]
  achieved = best["examples_per_s"] * flops_per_example / 1e9
  report = {
      "batch_size": BATCH.value, "seq_length": SEQ.value,
      "gflop_per_example": flops_per_example / 1e9,
      "best_variant": best_name,
      "examples_per_s": best["examples_per_s"],
      "peak_rss_mb": best["peak_rss_mb"],
      "achieved_gflops": achieved,
      "matmul_gflops": peak,
      "fraction_of_matmul_rate": achieved / peak,
      "variants": variants,
  }
  if "torch" in variants:
    report["speed_vs_torch"] = (best["examples_per_s"] /
                                variants["torch"]["examples_per_s"])
    report["rss_vs_torch"] = best["peak_rss_mb"] / variants["torch"]["peak_rss_mb"]
  if JSON.value:
    print(json.dumps(report, sort_keys=True))
    return
  print(f"ALBERT pretraining step, batch {BATCH.value} x seq {SEQ.value}, "
        f"{flops_per_example / 1e9:.1f} GFLOP/example (forward + backward)")
  for name, r in variants.items():
    print(f"  {name:<8} {r['examples_per_s']:8.2f} examples/s  "
          f"{r['seconds_per_step']:7.2f} s/step  peak RSS {r['peak_rss_mb']:8.0f} MB")
  print(f"  matmul rate {peak:.0f} GFLOP/s; best ({best_name}) achieves "
        f"{achieved:.0f} GFLOP/s = {achieved / peak:.0%} of it")
  if "torch" in variants:
    print(f"  vs transformers PyTorch: {report['speed_vs_torch']:.2f}x speed, "
          f"{report['rss_vs_torch']:.2f}x peak RSS")


if __name__ == "__main__":
  app.run(main)
