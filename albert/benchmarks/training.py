"""Training speed and memory per precision, against transformers at best.

The measuring behind `tools/benchmark_train.py` (its --help says what is
measured and how). Every variant runs in a process of its own
(`albert.benchmarks.training_workers`); `measure` starts them and takes their
turns.
"""

import dataclasses
import json
import os
import statistics
import sys
from typing import Dict, List, Sequence

from albert import configs
from albert.modeling import flops
from albert.modeling.config import AlbertConfig
from official.benchmark import cpu_info
from official.benchmark import peers as peer_packages  # `peers`: the variants
from official.benchmark import turns
# Registered with gin for the gin files' TrainerConfig / OptimizerConfig
# bindings (the workers build the trainer; this process only parses).
from official.core import trainer_config  # noqa: F401
from official.optimization import optimizer_config  # noqa: F401
from official.errors import CommandError
from official.errors import InputError

PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")
OURS = ("tf", "tf_xla")
PEERS = ("torch_eager", "torch_compile")
# pretraining: MLM + SOP with the gin files' optimizer (LAMB); classification:
# fine-tuning a sequence classifier of NUM_CLASSES classes (MNLI's) with AdamW.
TASKS = ("pretraining", "classification")
NUM_CLASSES = 3


@dataclasses.dataclass(frozen=True)
class TrainBenchmark:
  """What to measure (the command's flags of the same names).

  Attributes:
    task: one of `TASKS`.
    gin_files, gin_params: the model size, layered.
    batch_size, seq_length, max_predictions_per_seq: the synthetic batch.
    precision: one of `PRECISIONS`, or "all".
    steps: timed steps per variant, alone (stage 1).
    warmup_steps: untimed steps first.
    rounds: rounds of turns between the two fastest (stage 2).
    torch: also measure transformers' model where torch is installed.
    torch_compile: with `torch`, under `torch.compile` as well as eager
      (the peer at its best; False only to save its compile time: a
      ratio against eager alone is not a headline).
    recompute: ours with `TrainerConfig.recompute` (activations recomputed
      in the backward pass).
    xla: also measure ours under XLA.
    against_gin_params: also measure ours (TF kernels) with these extra gin
      bindings, alone and in paired turns with ours without them: what one
      setting changes (e.g. `TrainerConfig.fused_kernels=False`).
  """

  task: str = "pretraining"
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
  torch_compile: bool = True
  recompute: bool = False
  xla: bool = True
  against_gin_params: Sequence[str] = ()

  @property
  def ours(self) -> tuple:
    return OURS if self.xla else OURS[:1]

  def __post_init__(self):
    for name in ("steps", "rounds", "warmup_steps", "batch_size", "seq_length"):
      if getattr(self, name) < 1:
        raise InputError(f"--{name}={getattr(self, name)} must be >= 1")
    if self.task not in TASKS:
      raise InputError(f"--task={self.task} is not one of {TASKS}")
    if self.precision not in PRECISIONS + ("all",):
      raise InputError(
          f"--precision={self.precision} is not one of {PRECISIONS} or all"
      )

  @property
  def classification(self) -> bool:
    return self.task == "classification"

  @property
  def num_predictions(self) -> int:
    """Masked-LM predictions per example (none when fine-tuning)."""
    return 0 if self.classification else self.max_predictions_per_seq

  @property
  def num_classes(self) -> int:
    """Outputs of the head on the pooled output (SOP's 2 when pretraining)."""
    return NUM_CLASSES if self.classification else 2

  def model_config(self) -> AlbertConfig:
    """The AlbertConfig of the gin files (trainer bindings resolve too)."""
    configs.parse(self.gin_files, self.gin_params)
    return AlbertConfig()


def _worker_argv(s: TrainBenchmark, name: str) -> List[str]:
  """This module as a worker process serving variant `name`."""
  return [
      sys.executable,
      "-m",
      "albert.benchmarks.training_workers",
      name,
      json.dumps(dataclasses.asdict(s)),
  ]


def _log(message: str) -> None:
  print(f"benchmark_train: {message}", file=sys.stderr, flush=True)


def _against_label(s: TrainBenchmark) -> str:
  return " with " + " ".join(s.against_gin_params)


def _against(s: TrainBenchmark) -> TrainBenchmark:
  """The settings of the variant that `against_gin_params` describes."""
  return dataclasses.replace(
      s, gin_params=tuple(s.gin_params) + tuple(s.against_gin_params)
  )


class _Variants:
  """The variants of one precision, each timed alone in a fresh process
  (stage 1) whose worker stays up, idle, until `release`d: stage 2 takes
  its turns in the same processes, so no variant starts, loads and
  compiles twice (`_measure_variants` keeps at most three up at once). A
  variant's peak RSS is its process's, read when the process ends.
  """

  def __init__(self, s: TrainBenchmark, precision: str):
    self.s = s
    self.precision = precision
    self.results: Dict[str, dict] = {}
    self.kept: Dict[str, turns.Worker] = {}

  def run(self, impl: str, s: TrainBenchmark = None, label: str = "") -> dict:
    """Times `impl` alone (under `s`, default the benchmark's) and keeps
    its worker up; `release` ends it."""
    s = s or self.s
    name = f"{self.precision}/{impl}"
    _log(f"running {name}{label} alone ...")
    worker = turns.Worker(
        name + label, _worker_argv(s, name), env=_worker_env()
    )
    try:
      seconds = [worker.time() for _ in range(s.steps)]
    except turns.WorkerError:
      worker.kill()
      raise
    median = statistics.median(seconds)
    key = impl + label
    self.kept[key] = worker
    self.results[key] = dict(
        worker.info,
        seconds_per_step=median,
        examples_per_s=s.batch_size / median,
    )
    return self.results[key]

  def fastest(self, impls: Sequence[str], keep: Sequence[str] = ()) -> str:
    """Runs `impls` alone in turn; ends each but the fastest so far and
    those in `keep`."""
    best = None
    for impl in impls:
      self.run(impl)
      if best is None or (
          self.results[impl]["examples_per_s"]
          > self.results[best]["examples_per_s"]
      ):
        best, loser = impl, best
      else:
        loser = impl
      if loser is not None and loser not in keep:
        self.release(loser)
    return best

  def release(self, key: str) -> None:
    """Ends the worker of `key`; its last line (peak RSS) joins its result."""
    worker = self.kept.pop(key, None)
    if worker is not None:
      self.results[key].update(worker.close())

  def kill(self) -> None:
    for worker in self.kept.values():
      worker.kill()
    self.kept.clear()


def _worker_env():
  env = dict(os.environ)
  env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  return env


def _side_by_side(a: turns.Worker, b: turns.Worker, rounds: int) -> float:
  """Stage 2: workers a and b take turns for `rounds` rounds; the median
  per-round time(b) / time(a)."""
  _log(f"{a.name} and {b.name} taking turns for {rounds} rounds ...")
  times = turns.take_turns([a, b], rounds)
  return turns.paired_ratio(times, b.name, a.name)


def _measure_variants(s, precision, native, pool, peers, flops_per_example):
  """Stages 1 and 2 of `precision` in `pool`'s workers: the speeds and
  ratios (each variant's peak RSS comes when its worker ends)."""
  out = {}
  baseline = ("tf",) if s.against_gin_params else ()
  best = out["best"] = pool.fastest(s.ours, keep=baseline)
  if s.against_gin_params:
    label = _against_label(s)
    pool.run("tf", _against(s), label)
    out["speed_vs_against"] = _side_by_side(
        pool.kept["tf"], pool.kept["tf" + label], s.rounds
    )
    pool.release("tf" + label)
    if best != "tf":
      pool.release("tf")
  if peers:
    peer = out["fastest_peer"] = pool.fastest(peers)
    out["speed_vs_peer"] = _side_by_side(
        pool.kept[best], pool.kept[peer], s.rounds
    )
    pool.release(peer)
  pool.release(best)
  matmul = turns.Worker(
      "matmul", _worker_argv(s, f"{precision}/matmul"), env=_worker_env()
  )
  matmul.close()
  out["matmul_gflops"] = matmul.info["matmul_gflops"]
  out["block_matmul_gflops"] = matmul.info["block_matmul_gflops"]
  out["achieved_gflops"] = (
      pool.results[best]["examples_per_s"] * flops_per_example / 1e9
  )
  for rate in ("matmul", "block_matmul"):
    out[f"fraction_of_{rate}_rate"] = (
        out["achieved_gflops"] / out[f"{rate}_gflops"]
    )
  if (
      max(out["fraction_of_matmul_rate"], out["fraction_of_block_matmul_rate"])
      > 1
  ):
    # The rates are TensorFlow's own kernels in this precision; a step
    # that beats them computes its products some other way (XLA runs
    # emulated bfloat16 / float16 products in float32, for one).
    out["rate_note"] = (
        f"{best} outruns TensorFlow's {precision} matmul kernels on this "
        f"CPU (native {precision}: {'yes' if native else 'no'}): its "
        "products do not run on those kernels, so the fractions are no bound"
    )
  return out


def _measure_precision(s, precision, cpu, flops_per_example, with_torch):
  """Stage 1 for every variant of `precision`, then stage 2 for the fastest."""
  report = {"native": cpu.native(precision)}
  peers = PEERS if s.torch_compile else PEERS[:1]
  peers = peers if with_torch and cpu.native(precision) else ()
  if with_torch and not peers:
    report["note"] = (
        f"{cpu.model} has no native {precision[6:]} matrix "
        "instructions: transformers is not run in this "
        "precision (ours runs, with emulated arithmetic)"
    )
  pool = _Variants(s, precision)
  try:
    report.update(
        _measure_variants(
            s, precision, report["native"], pool, peers, flops_per_example
        )
    )
  finally:
    pool.kill()
  variants = report["variants"] = {
      impl: pool.results[impl] for impl in s.ours + peers
  }
  if peers:
    report["rss_vs_peer"] = (
        variants[report["best"]]["peak_rss_mb"]
        / variants[report["fastest_peer"]]["peak_rss_mb"]
    )
  if s.against_gin_params:
    alone = pool.results["tf" + _against_label(s)]
    report["against"] = dict(
        alone,
        gin_params=list(s.against_gin_params),
        speed_vs_against=report.pop("speed_vs_against"),
        rss_vs_against=variants["tf"]["peak_rss_mb"] / alone["peak_rss_mb"],
    )
  return report


def measure(s: TrainBenchmark) -> Dict:
  """Runs the benchmark (stages 1 and 2 for each precision); the report."""
  config = s.model_config()
  cpu = cpu_info.read()
  with_torch = s.torch and peer_packages.installed("torch", "transformers")
  if with_torch and config.sharing != "all":
    _log(
        f"AlbertConfig.sharing={config.sharing!r} has no transformers "
        "equivalent: measuring ours only"
    )
    with_torch = False
  flops_per_example = flops.training_flops_per_example(
      config, s.seq_length, s.num_predictions, s.num_classes
  )
  precisions = PRECISIONS if s.precision == "all" else (s.precision,)
  report = {
      "task": s.task,
      "batch_size": s.batch_size,
      "seq_length": s.seq_length,
      "recompute": s.recompute,
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
          "block_matmul_gflops": best["block_matmul_gflops"],
          "fraction_of_block_matmul_rate": best[
              "fraction_of_block_matmul_rate"
          ],
      }
  )
  return report


def format_report(report: Dict, rounds: int) -> str:
  """The report as docs/pretraining.md shows it."""
  lines = []
  what = {
      "pretraining": "pretraining step",
      "classification": (
          f"fine-tuning step ({NUM_CLASSES}-class sequence classifier, AdamW)"
      ),
  }[report["task"]]
  lines.append(
      f"ALBERT {what}, batch {report['batch_size']} x seq "
      f"{report['seq_length']}, {report['gflop_per_example']:.1f} "
      "GFLOP/example (forward + backward)"
      + (", ours with activation recomputation" if report["recompute"] else "")
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
        f"  matmul rate {r['matmul_gflops']:.0f} GFLOP/s (the step's best "
        f"product), {r['block_matmul_gflops']:.0f} (an encoder block's "
        f"products, forward and backward); best of ours ({r['best']}) "
        f"achieves {r['achieved_gflops']:.0f} GFLOP/s = "
        f"{r['fraction_of_matmul_rate']:.0%} / "
        f"{r['fraction_of_block_matmul_rate']:.0%} of them"
    )
    if "rate_note" in r:
      lines.append(f"  {r['rate_note']}")
    if "speed_vs_peer" in r:
      lines.append(
          f"  vs the fastest transformers variant ({r['fastest_peer']}): "
          f"{r['speed_vs_peer']:.2f}x speed (median of {rounds} "
          f"paired rounds), {r['rss_vs_peer']:.2f}x peak RSS"
      )
    if "against" in r:
      a = r["against"]
      lines.append(
          f"  tf with {' '.join(a['gin_params'])}: {a['examples_per_s']:.2f} "
          f"examples/s, peak RSS {a['peak_rss_mb']:.0f} MB; tf is "
          f"{a['speed_vs_against']:.2f}x its speed (median of {rounds} paired "
          f"rounds), {a['rss_vs_against']:.2f}x its peak RSS"
      )
    if "note" in r:
      lines.append(f"  {r['note']}")
  return "\n".join(lines)
