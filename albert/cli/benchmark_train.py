r"""Pretraining speed and memory per precision, against transformers at best.

  python tools/benchmark_train.py --gin_file=gin/base.gin --batch_size=32 \
      --seq_length=128 [--precision=float32|mixed_bfloat16|mixed_float16|all] \
      [--steps=3] [--rounds=5] [--json]

For each precision, on synthetic inputs of the given shapes:
  ours     whole optimizer steps of the real training loop
           (`official.core.trainer`: forward, backward, LAMB, clipping) under
           the Keras policy of that precision, with TensorFlow's kernels (`tf`)
           and with XLA (`tf_xla`);
  peer     transformers' `AlbertForPreTraining` (the same shapes, embedding
           size and groups; MLM head on the masked positions only, AdamW,
           clipping) eager and under `torch.compile`, in float32 or under
           `torch.autocast` of the precision. Reduced-precision peers run only
           where the CPU computes that type natively (see
           `official.benchmark.cpu_info`); the report says so otherwise.
Stage 1 runs every variant alone in a fresh process (warm-up, `--steps` timed
steps, its own peak RSS). Stage 2 runs the fastest of ours and the fastest peer
of the precision side by side, taking turns step by step for `--rounds`
rounds (`official.benchmark.turns`): the speed ratio is the median of the
per-round ratios. In the same run it measures the precision's matrix-multiply
rate at the model's largest product ([B*T, H] x [H, intermediate]), the
ceiling for the achieved GFLOP/s.
"""

import dataclasses
import json
import os
import statistics
import subprocess
import sys

from absl import flags

from albert import cli
from albert import REPO_ROOT
from official.benchmark import cpu_info
from official.benchmark import turns
from official.errors import CommandError
from official.errors import InputError

PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")
OURS = ("tf", "tf_xla")
PEERS = ("torch_eager", "torch_compile")

GIN_FILES = flags.DEFINE_multi_string(
    "gin_file", ["gin/base.gin"], "Model size gin files, layered."
)
GIN_PARAMS = flags.DEFINE_multi_string("gin_param", [], "Extra gin bindings.")
BATCH = flags.DEFINE_integer("batch_size", 32, "Examples per step.")
SEQ = flags.DEFINE_integer("seq_length", 128, "Tokens per example.")
PREDICTIONS = flags.DEFINE_integer(
    "max_predictions_per_seq", 20, "Masked positions per example."
)
PRECISION = flags.DEFINE_enum(
    "precision",
    "float32",
    PRECISIONS + ("all",),
    "Keras mixed-precision policy to measure.",
)
STEPS = flags.DEFINE_integer("steps", 3, "Timed steps per variant, alone.")
WARMUP = flags.DEFINE_integer("warmup_steps", 2, "Untimed steps first.")
ROUNDS = flags.DEFINE_integer(
    "rounds", 5, "Rounds of turns between the two fastest."
)
JSON = flags.DEFINE_bool("json", False, "Print one JSON object.")
TORCH = flags.DEFINE_bool(
    "torch", True, "Also measure transformers' PyTorch model if present."
)
WORKER = flags.DEFINE_string(
    "worker",
    None,
    "Internal: PRECISION/VARIANT or PRECISION/matmul "
    "to serve in this process.",
)


def _config():
  """The AlbertConfig of the gin files (trainer configurables registered)."""
  # Imported first so that TrainerConfig / OptimizerConfig bindings resolve.
  from albert.modeling.config import AlbertConfig
  from official.config import gin_files
  from official.core import trainer_config  # noqa: F401
  from official.optimization import optimizer_config  # noqa: F401

  gin_files.parse_gin(
      GIN_FILES.value, GIN_PARAMS.value, search_paths=[REPO_ROOT]
  )
  return AlbertConfig()


def _synthetic_batch(config, batch_size):
  import numpy as np

  rng = np.random.default_rng(0)
  shape = (batch_size, SEQ.value)
  positions = np.sort(
      np.stack(
          [
              rng.choice(
                  np.arange(1, SEQ.value), PREDICTIONS.value, replace=False
              )
              for _ in range(batch_size)
          ]
      ),
      axis=1,
  )
  return {
      "input_word_ids": rng.integers(5, config.vocab_size, shape, np.int32),
      "input_mask": np.ones(shape, np.int32),
      "input_type_ids": (np.arange(SEQ.value) >= SEQ.value // 2)
      .astype(np.int32)[None]
      .repeat(batch_size, 0),
      "masked_lm_positions": positions.astype(np.int32),
      "masked_lm_ids": rng.integers(
          5, config.vocab_size, positions.shape
      ).astype(np.int32),
      "masked_lm_weights": np.ones(positions.shape, np.float32),
      "sentence_order_label": rng.integers(0, 2, batch_size).astype(np.int32),
  }


def serve_ours(precision: str, xla: bool) -> None:
  """The real Trainer step on one repeated in-memory batch."""
  import tempfile
  import tensorflow as tf
  from albert.pretrain_task import PretrainTask
  from official.core.trainer import Trainer
  from official.core.trainer_config import TrainerConfig
  from official.distribute.strategy import make_strategy
  from official.optimization.optimizer_config import OptimizerConfig

  config = _config()
  batch = _synthetic_batch(config, BATCH.value)

  class SyntheticPretrainTask(PretrainTask):

    def build_inputs(
        self, input_context, *, training, batch_size, skip_examples=0
    ):
      del input_context, training, batch_size, skip_examples
      return tf.data.Dataset.from_tensors(batch).repeat()

  task = SyntheticPretrainTask(
      train_file_pattern="synthetic",
      global_batch_size=BATCH.value,
      seq_length=SEQ.value,
      max_predictions_per_seq=PREDICTIONS.value,
      model_config=config,
  )
  trainer_config = dataclasses.replace(
      TrainerConfig(),
      train_steps=10**9,
      mixed_precision_policy=precision,
      jit_compile=xla,
  )
  with tempfile.TemporaryDirectory() as model_dir:
    trainer = Trainer(
        task=task,
        strategy=make_strategy("default"),
        optimizer_config=OptimizerConfig(),
        config=trainer_config,
        model_dir=model_dir,
    )
    iterator = trainer.train_iterator()
    first_loss, _ = trainer.run_steps(iterator, 1)
    if WARMUP.value > 1:
      trainer.run_steps(iterator, WARMUP.value - 1)
    last = {}

    def run(_):
      last["loss"], _ = trainer.run_steps(iterator, 1)

    turns.serve(run, {"first_loss": first_loss}, lambda: dict(last))


def serve_torch(precision: str, compiled: bool) -> None:
  """transformers' AlbertForPreTraining + AdamW, MLM on masked positions."""
  import contextlib
  import torch
  import transformers

  config = _config()
  batch = {
      k: torch.from_numpy(v).long()
      if v.dtype != "float32"
      else torch.from_numpy(v)
      for k, v in _synthetic_batch(config, BATCH.value).items()
  }
  model = transformers.AlbertForPreTraining(
      transformers.AlbertConfig(
          vocab_size=config.vocab_size,
          embedding_size=config.embedding_size,
          hidden_size=config.hidden_size,
          num_hidden_layers=config.num_layers,
          num_attention_heads=config.num_heads,
          intermediate_size=config.intermediate_size,
          num_hidden_groups=config.num_hidden_groups,
          inner_group_num=config.inner_group_num,
          hidden_act="gelu_new",
          hidden_dropout_prob=0.0,
          attention_probs_dropout_prob=0.0,
          max_position_embeddings=config.max_position_embeddings,
      )
  )
  optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
  autocast = {
      "float32": contextlib.nullcontext,
      "mixed_bfloat16": lambda: torch.autocast("cpu", torch.bfloat16),
      "mixed_float16": lambda: torch.autocast("cpu", torch.float16),
  }[precision]
  hidden = config.hidden_size

  def losses(inputs):
    out = model.albert(
        input_ids=inputs["input_word_ids"],
        attention_mask=inputs["input_mask"],
        token_type_ids=inputs["input_type_ids"],
    )
    index = inputs["masked_lm_positions"][..., None].expand(-1, -1, hidden)
    masked = out.last_hidden_state.gather(1, index)  # [B, P, H]
    logits = model.predictions(masked).float()  # [B, P, V]
    mlm = torch.nn.functional.cross_entropy(
        logits.flatten(0, 1), inputs["masked_lm_ids"].flatten()
    )
    sop = torch.nn.functional.cross_entropy(
        model.sop_classifier(out.pooler_output).float(),
        inputs["sentence_order_label"],
    )
    return mlm + sop

  forward = torch.compile(losses) if compiled else losses

  def step():
    optimizer.zero_grad(set_to_none=True)
    with autocast():
      loss = forward(batch)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return float(loss)

  first_loss = step()
  for _ in range(WARMUP.value - 1):
    step()
  last = {}

  def run(_):
    last["loss"] = step()

  turns.serve(
      run,
      {"first_loss": first_loss, "threads": torch.get_num_threads()},
      lambda: dict(last),
  )


def serve_matmul(precision: str) -> None:
  """TensorFlow's rate for [B*T, H] x [H, intermediate] in `precision`."""
  import time
  import tensorflow as tf

  config = _config()
  dtype = {
      "float32": tf.float32,
      "mixed_bfloat16": tf.bfloat16,
      "mixed_float16": tf.float16,
  }[precision]
  m, k, n = (
      BATCH.value * SEQ.value,
      config.hidden_size,
      config.intermediate_size,
  )
  a = tf.cast(tf.random.normal([m, k]), dtype)
  b = tf.cast(tf.random.normal([k, n], stddev=k**-0.5), dtype)
  reps = 8

  @tf.function
  def chain(x):
    total = tf.zeros([], tf.float32)
    for _ in range(reps):  # independent products, read so none is pruned
      total += tf.cast(tf.matmul(x, b)[0, 0], tf.float32)
      x = x + tf.cast(1e-3, dtype)
    return total

  chain(a).numpy()
  rates = []
  for _ in range(3):
    start = time.perf_counter()
    chain(a).numpy()
    rates.append(2.0 * m * k * n * reps / (time.perf_counter() - start) / 1e9)
  turns.serve(lambda _: None, {"matmul_gflops": max(rates), "shape": [m, k, n]})


def _worker_argv(name: str):
  argv = [
      sys.executable,
      os.path.abspath(__file__),
      f"--worker={name}",
      f"--batch_size={BATCH.value}",
      f"--seq_length={SEQ.value}",
      f"--max_predictions_per_seq={PREDICTIONS.value}",
      f"--warmup_steps={WARMUP.value}",
  ]
  argv += [f"--gin_file={f}" for f in GIN_FILES.value]
  argv += [f"--gin_param={p}" for p in GIN_PARAMS.value]
  return argv


def _log(message: str) -> None:
  print(f"benchmark_train: {message}", file=sys.stderr, flush=True)


def _alone(name: str) -> dict:
  """Stage 1: one variant alone: warm-up, --steps timed steps, peak RSS."""
  _log(f"running {name} alone ...")
  worker = turns.Worker(name, _worker_argv(name), env=_worker_env())
  try:
    seconds = [worker.time() for _ in range(STEPS.value)]
  except turns.WorkerError:
    worker.kill()
    raise
  final = worker.close()
  median = statistics.median(seconds)
  return dict(
      worker.info,
      **final,
      seconds_per_step=median,
      examples_per_s=BATCH.value / median,
  )


def _worker_env():
  env = dict(os.environ)
  env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  return env


def _side_by_side(a: str, b: str) -> float:
  """Stage 2: a and b take turns; median per-round of time(b) / time(a)."""
  _log(f"{a} and {b} taking turns for {ROUNDS.value} rounds ...")
  workers = []
  try:
    for name in (a, b):
      workers.append(turns.Worker(name, _worker_argv(name), env=_worker_env()))
    times = turns.take_turns(workers, ROUNDS.value)
  finally:
    for w in workers:
      w.kill()
  return turns.paired_ratio(times, b, a)


def _torch_available() -> bool:
  return (
      subprocess.run(
          [sys.executable, "-c", "import torch, transformers"],
          capture_output=True,
      ).returncode
      == 0
  )


def _measure_precision(precision, cpu, flops_per_example, with_torch):
  """Stage 1 for every variant of `precision`, then stage 2 for the fastest."""
  report = {"native": cpu.native(precision), "variants": {}}
  peers = PEERS if with_torch and cpu.native(precision) else ()
  if with_torch and not peers:
    report["note"] = (
        f"{cpu.model} has no native {precision[6:]} matrix "
        "instructions: transformers is not run in this "
        "precision (ours runs, with emulated arithmetic)"
    )
  for impl in OURS + peers:
    report["variants"][impl] = _alone(f"{precision}/{impl}")
  matmul = turns.Worker(
      "matmul", _worker_argv(f"{precision}/matmul"), env=_worker_env()
  )
  matmul.close()
  report["matmul_gflops"] = matmul.info["matmul_gflops"]
  variants = report["variants"]
  best = max(OURS, key=lambda n: variants[n]["examples_per_s"])
  report["best"] = best
  report["achieved_gflops"] = (
      variants[best]["examples_per_s"] * flops_per_example / 1e9
  )
  report["fraction_of_matmul_rate"] = (
      report["achieved_gflops"] / report["matmul_gflops"]
  )
  if peers:
    peer = max(peers, key=lambda n: variants[n]["examples_per_s"])
    report["fastest_peer"] = peer
    report["speed_vs_peer"] = _side_by_side(
        f"{precision}/{best}", f"{precision}/{peer}"
    )
    report["rss_vs_peer"] = (
        variants[best]["peak_rss_mb"] / variants[peer]["peak_rss_mb"]
    )
  return report


def _print_report(report):
  print(
      f"ALBERT pretraining step, batch {report['batch_size']} x seq "
      f"{report['seq_length']}, {report['gflop_per_example']:.1f} "
      "GFLOP/example (forward + backward)"
  )
  print(f"CPU: {report['cpu_description']}")
  for precision, r in report["precisions"].items():
    print(f"{precision}:")
    for name, v in r["variants"].items():
      print(
          f"  {name:<14} {v['examples_per_s']:8.2f} examples/s "
          f"{v['seconds_per_step']:7.2f} s/step  peak RSS "
          f"{v['peak_rss_mb']:7.0f} MB"
      )
    print(
        f"  matmul rate {r['matmul_gflops']:.0f} GFLOP/s; best of ours "
        f"({r['best']}) achieves {r['achieved_gflops']:.0f} GFLOP/s = "
        f"{r['fraction_of_matmul_rate']:.0%} of it"
    )
    if "speed_vs_peer" in r:
      print(
          f"  vs the fastest transformers variant ({r['fastest_peer']}): "
          f"{r['speed_vs_peer']:.2f}x speed (median of {ROUNDS.value} "
          f"paired rounds), {r['rss_vs_peer']:.2f}x peak RSS"
      )
    if "note" in r:
      print(f"  {r['note']}")


def _serve_worker(name: str) -> None:
  precision, _, variant = name.partition("/")
  if precision not in PRECISIONS or variant not in OURS + PEERS + ("matmul",):
    raise InputError(
        f"unknown --worker={name}: an internal flag for the processes this "
        "tool starts; run without it"
    )
  if variant == "matmul":
    serve_matmul(precision)
  elif variant in OURS:
    serve_ours(precision, xla=variant == "tf_xla")
  else:
    serve_torch(precision, compiled=variant == "torch_compile")


def main(argv):
  cli.unexpected_arguments(argv)
  if WORKER.value:
    _serve_worker(WORKER.value)
    return
  from albert.modeling import flops

  config = _config()
  for name in ("steps", "rounds", "warmup_steps", "batch_size", "seq_length"):
    if flags.FLAGS[name].value < 1:
      raise InputError(f"--{name}={flags.FLAGS[name].value} must be >= 1")
  cpu = cpu_info.read()
  with_torch = TORCH.value and _torch_available()
  if with_torch and config.sharing != "all":
    _log(
        f"AlbertConfig.sharing={config.sharing!r} has no transformers "
        "equivalent: measuring ours only"
    )
    with_torch = False
  flops_per_example = flops.training_flops_per_example(
      config, SEQ.value, PREDICTIONS.value
  )
  precisions = PRECISIONS if PRECISION.value == "all" else (PRECISION.value,)
  report = {
      "batch_size": BATCH.value,
      "seq_length": SEQ.value,
      "gflop_per_example": flops_per_example / 1e9,
      "cpu": cpu.to_dict(),
      "cpu_description": cpu.describe(),
      "precisions": {},
      "variants": {},
  }
  try:
    for precision in precisions:
      r = _measure_precision(precision, cpu, flops_per_example, with_torch)
      report["precisions"][precision] = r
      for name, v in r["variants"].items():
        report["variants"][f"{precision}/{name}"] = v
  except turns.WorkerError as e:  # a variant's process failed: its error line
    raise CommandError(f"variant {e}") from e
  best_precision = max(
      precisions, key=lambda p: report["precisions"][p]["achieved_gflops"]
  )
  best = report["precisions"][best_precision]
  report.update(
      {
          "best_variant": f"{best_precision}/{best['best']}",
          "examples_per_s": best["variants"][best["best"]]["examples_per_s"],
          "peak_rss_mb": best["variants"][best["best"]]["peak_rss_mb"],
          "achieved_gflops": best["achieved_gflops"],
          "matmul_gflops": best["matmul_gflops"],
          "fraction_of_matmul_rate": best["fraction_of_matmul_rate"],
      }
  )
  if JSON.value:
    print(json.dumps(report, sort_keys=True))
  else:
    _print_report(report)


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
