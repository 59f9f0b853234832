"""Pretraining speed and memory per precision, against transformers at best.

The measuring behind `tools/benchmark_train.py` (its --help says what is
measured and how). Every variant runs in a process of its own: this module,
run as `python -m albert.benchmarks.training VARIANT SETTINGS_JSON`, is that
worker; `measure` starts them and takes their turns.
"""

import contextlib
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Sequence

import numpy as np
import tensorflow as tf

from albert import REPO_ROOT
from albert.modeling import flops
from albert.modeling.config import AlbertConfig
from albert.pretrain_task import PretrainTask
from official.benchmark import cpu_info
from official.benchmark import turns
from official.config.gin_files import parse_gin
from official.core.trainer import Trainer
from official.core.trainer_config import TrainerConfig
from official.distribute.strategy import make_strategy
from official.errors import CommandError
from official.errors import InputError
from official.optimization.optimizer_config import OptimizerConfig

PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")
OURS = ("tf", "tf_xla")
PEERS = ("torch_eager", "torch_compile")


@dataclasses.dataclass(frozen=True)
class TrainBenchmark:
  """What to measure (the command's flags of the same names).

  Attributes:
    gin_files, gin_params: the model size, layered.
    batch_size, seq_length, max_predictions_per_seq: the synthetic batch.
    precision: one of `PRECISIONS`, or "all".
    steps: timed steps per variant, alone (stage 1).
    warmup_steps: untimed steps first.
    rounds: rounds of turns between the two fastest (stage 2).
    torch: also measure transformers' model where torch is installed.
  """

  gin_files: Sequence[str] = ("gin/base.gin",)
  gin_params: Sequence[str] = ()
  batch_size: int = 32
  seq_length: int = 128
  max_predictions_per_seq: int = 20
  precision: str = "float32"
  steps: int = 3
  warmup_steps: int = 2
  rounds: int = 5
  torch: bool = True

  def __post_init__(self):
    for name in ("steps", "rounds", "warmup_steps", "batch_size", "seq_length"):
      if getattr(self, name) < 1:
        raise InputError(f"--{name}={getattr(self, name)} must be >= 1")
    if self.precision not in PRECISIONS + ("all",):
      raise InputError(
          f"--precision={self.precision} is not one of {PRECISIONS} or all"
      )

  def model_config(self) -> AlbertConfig:
    """The AlbertConfig of the gin files (trainer bindings resolve too: the
    trainer's configurables are imported by this module)."""
    parse_gin(self.gin_files, self.gin_params, search_paths=[REPO_ROOT])
    return AlbertConfig()


def synthetic_batch(s: TrainBenchmark, config: AlbertConfig):
  """One batch of random pretraining inputs of the benchmark's shapes."""
  rng = np.random.default_rng(0)
  shape = (s.batch_size, s.seq_length)
  positions = np.sort(
      np.stack(
          [
              rng.choice(
                  np.arange(1, s.seq_length),
                  s.max_predictions_per_seq,
                  replace=False,
              )
              for _ in range(s.batch_size)
          ]
      ),
      axis=1,
  )
  return {
      "input_word_ids": rng.integers(5, config.vocab_size, shape, np.int32),
      "input_mask": np.ones(shape, np.int32),
      "input_type_ids": (np.arange(s.seq_length) >= s.seq_length // 2)
      .astype(np.int32)[None]
      .repeat(s.batch_size, 0),
      "masked_lm_positions": positions.astype(np.int32),
      "masked_lm_ids": rng.integers(
          5, config.vocab_size, positions.shape
      ).astype(np.int32),
      "masked_lm_weights": np.ones(positions.shape, np.float32),
      "sentence_order_label": rng.integers(0, 2, s.batch_size).astype(np.int32),
  }


def serve_ours(s: TrainBenchmark, precision: str, xla: bool) -> None:
  """The real Trainer step on one repeated in-memory batch."""
  config = s.model_config()
  batch = synthetic_batch(s, config)

  class SyntheticPretrainTask(PretrainTask):

    def build_inputs(
        self, input_context, *, training, batch_size, skip_examples=0
    ):
      del input_context, training, batch_size, skip_examples
      return tf.data.Dataset.from_tensors(batch).repeat()

  task = SyntheticPretrainTask(
      train_file_pattern="synthetic",
      global_batch_size=s.batch_size,
      seq_length=s.seq_length,
      max_predictions_per_seq=s.max_predictions_per_seq,
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
    if s.warmup_steps > 1:
      trainer.run_steps(iterator, s.warmup_steps - 1)
    last = {}

    def run(_):
      last["loss"], _ = trainer.run_steps(iterator, 1)

    turns.serve(run, {"first_loss": first_loss}, lambda: dict(last))


def serve_torch(s: TrainBenchmark, precision: str, compiled: bool) -> None:
  """transformers' AlbertForPreTraining + AdamW, MLM on masked positions."""
  # Imported here: the peer is a test-time dependency, never a runtime one.
  import torch
  import transformers

  config = s.model_config()
  batch = {
      k: torch.from_numpy(v).long()
      if v.dtype != "float32"
      else torch.from_numpy(v)
      for k, v in synthetic_batch(s, config).items()
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
  for _ in range(s.warmup_steps - 1):
    step()
  last = {}

  def run(_):
    last["loss"] = step()

  turns.serve(
      run,
      {"first_loss": first_loss, "threads": torch.get_num_threads()},
      lambda: dict(last),
  )


def serve_matmul(s: TrainBenchmark, precision: str) -> None:
  """TensorFlow's rate for [B*T, H] x [H, intermediate] in `precision`."""
  config = s.model_config()
  dtype = {
      "float32": tf.float32,
      "mixed_bfloat16": tf.bfloat16,
      "mixed_float16": tf.float16,
  }[precision]
  m, k, n = (
      s.batch_size * s.seq_length,
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


def _worker_argv(s: TrainBenchmark, name: str) -> List[str]:
  """This module as a worker process serving variant `name`."""
  return [
      sys.executable,
      "-m",
      __name__,
      name,
      json.dumps(dataclasses.asdict(s)),
  ]


def _log(message: str) -> None:
  print(f"benchmark_train: {message}", file=sys.stderr, flush=True)


def _alone(s: TrainBenchmark, name: str) -> dict:
  """Stage 1: one variant alone: warm-up, --steps timed steps, peak RSS."""
  _log(f"running {name} alone ...")
  worker = turns.Worker(name, _worker_argv(s, name), env=_worker_env())
  try:
    seconds = [worker.time() for _ in range(s.steps)]
  except turns.WorkerError:
    worker.kill()
    raise
  final = worker.close()
  median = statistics.median(seconds)
  return dict(
      worker.info,
      **final,
      seconds_per_step=median,
      examples_per_s=s.batch_size / median,
  )


def _worker_env():
  env = dict(os.environ)
  env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  return env


def _side_by_side(s: TrainBenchmark, a: str, b: str) -> float:
  """Stage 2: a and b take turns; median per-round of time(b) / time(a)."""
  _log(f"{a} and {b} taking turns for {s.rounds} rounds ...")
  workers = []
  try:
    for name in (a, b):
      workers.append(
          turns.Worker(name, _worker_argv(s, name), env=_worker_env())
      )
    times = turns.take_turns(workers, s.rounds)
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


def _measure_precision(s, precision, cpu, flops_per_example, with_torch):
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
    report["variants"][impl] = _alone(s, f"{precision}/{impl}")
  matmul = turns.Worker(
      "matmul", _worker_argv(s, f"{precision}/matmul"), env=_worker_env()
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
        s, f"{precision}/{best}", f"{precision}/{peer}"
    )
    report["rss_vs_peer"] = (
        variants[best]["peak_rss_mb"] / variants[peer]["peak_rss_mb"]
    )
  return report


def measure(s: TrainBenchmark) -> Dict:
  """Runs the benchmark (stages 1 and 2 for each precision); the report."""
  config = s.model_config()
  cpu = cpu_info.read()
  with_torch = s.torch and _torch_available()
  if with_torch and config.sharing != "all":
    _log(
        f"AlbertConfig.sharing={config.sharing!r} has no transformers "
        "equivalent: measuring ours only"
    )
    with_torch = False
  flops_per_example = flops.training_flops_per_example(
      config, s.seq_length, s.max_predictions_per_seq
  )
  precisions = PRECISIONS if s.precision == "all" else (s.precision,)
  report = {
      "batch_size": s.batch_size,
      "seq_length": s.seq_length,
      "gflop_per_example": flops_per_example / 1e9,
      "cpu": cpu.to_dict(),
      "cpu_description": cpu.describe(),
      "precisions": {},
      "variants": {},
  }
  try:
    for precision in precisions:
      r = _measure_precision(s, precision, cpu, flops_per_example, with_torch)
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
  return report


def format_report(report: Dict, rounds: int) -> str:
  """The report as the README shows it."""
  lines = []
  lines.append(
      f"ALBERT pretraining step, batch {report['batch_size']} x seq "
      f"{report['seq_length']}, {report['gflop_per_example']:.1f} "
      "GFLOP/example (forward + backward)"
  )
  lines.append(f"CPU: {report['cpu_description']}")
  for precision, r in report["precisions"].items():
    lines.append(f"{precision}:")
    for name, v in r["variants"].items():
      lines.append(
          f"  {name:<14} {v['examples_per_s']:8.2f} examples/s "
          f"{v['seconds_per_step']:7.2f} s/step  peak RSS "
          f"{v['peak_rss_mb']:7.0f} MB"
      )
    lines.append(
        f"  matmul rate {r['matmul_gflops']:.0f} GFLOP/s; best of ours "
        f"({r['best']}) achieves {r['achieved_gflops']:.0f} GFLOP/s = "
        f"{r['fraction_of_matmul_rate']:.0%} of it"
    )
    if "speed_vs_peer" in r:
      lines.append(
          f"  vs the fastest transformers variant ({r['fastest_peer']}): "
          f"{r['speed_vs_peer']:.2f}x speed (median of {rounds} "
          f"paired rounds), {r['rss_vs_peer']:.2f}x peak RSS"
      )
    if "note" in r:
      lines.append(f"  {r['note']}")
  return "\n".join(lines)


def serve_worker(s: TrainBenchmark, name: str) -> None:
  """Serves variant `name` (PRECISION/VARIANT or PRECISION/matmul) to the
  parent's turns until its stdin closes."""
  precision, _, variant = name.partition("/")
  if precision not in PRECISIONS or variant not in OURS + PEERS + ("matmul",):
    raise InputError(
        f"unknown benchmark worker {name!r}: one of PRECISION/VARIANT with "
        f"PRECISION in {PRECISIONS} and VARIANT in {OURS + PEERS + ('matmul',)}"
    )
  if variant == "matmul":
    serve_matmul(s, precision)
  elif variant in OURS:
    serve_ours(s, precision, xla=variant == "tf_xla")
  else:
    serve_torch(s, precision, compiled=variant == "torch_compile")


if __name__ == "__main__":
  # A worker process of `measure`: VARIANT SETTINGS_JSON.
  serve_worker(TrainBenchmark(**json.loads(sys.argv[2])), sys.argv[1])
