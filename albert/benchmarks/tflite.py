"""Batch-1 latency of the TFLite encoder against the SavedModel: the measuring
behind `tools/benchmark_tflite.py` (its --help says what is measured).
"""

import dataclasses
import os
import statistics
import sys
import tempfile
from typing import Dict, Sequence

import numpy as np
import tensorflow as tf

from albert import configs
from albert.benchmarks.workers import encoder_saved_model
from albert.benchmarks.workers import tflite_interpreter
from albert.modeling.config import AlbertConfig
from albert.modeling.encoder import AlbertEncoder
from albert.modeling.pretrainer import AlbertPretrainer
from albert.serving import tflite_export
from albert.serving.hub_encoder_module import HubEncoderModule
from official.benchmark import cpu_info
from official.benchmark import turns
from official.core.host import available_cores
from official.errors import CommandError
from official.errors import InputError


@dataclasses.dataclass(frozen=True)
class TfliteBenchmark:
  """What to measure (the command's flags of the same names)."""

  gin_files: Sequence[str] = ("gin/base.gin",)
  gin_params: Sequence[str] = ()
  seq_length: int = 128
  repeats: int = 30
  num_threads: int = 0


BASELINE = "saved_model"


def _size_mb(path: str) -> float:
  if os.path.isfile(path):
    return os.path.getsize(path) / 1e6
  total = 0
  for root, _, files in os.walk(path):
    total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
  return total / 1e6


def _worker(name, module, args):
  """`module` (of albert/benchmarks/workers) in a process of its own."""
  return turns.Worker(
      name, [sys.executable, "-m", module.__name__] + [str(a) for a in args]
  )


def _progress(message: str) -> None:
  print(f"benchmark_tflite: {message}", file=sys.stderr, flush=True)


def measure(s: TfliteBenchmark) -> Dict:
  """Exports a random encoder of the gin size as a SavedModel and both
  flatbuffers, times each in its own process, in turns; the report."""
  configs.parse(s.gin_files, s.gin_params)
  config = AlbertConfig()
  seq = s.seq_length
  if not 2 <= seq <= config.max_position_embeddings:
    raise InputError(
        f"--seq_length={seq}: the model takes 2 to "
        f"{config.max_position_embeddings} tokens"
    )
  if s.repeats < 1:
    raise InputError(f"--repeats={s.repeats} must be at least 1")
  if s.num_threads < 0:
    raise InputError(f"--num_threads={s.num_threads} must be 0 or more")
  threads = s.num_threads or available_cores()
  cpu = cpu_info.read()
  tf.random.set_seed(0)
  pretrainer = AlbertPretrainer(AlbertEncoder.from_config_object(config))
  pretrainer(pretrainer.dummy_inputs())
  workers = []
  try:
    with tempfile.TemporaryDirectory() as tmp:
      saved_model = os.path.join(tmp, "encoder")
      _progress("exporting the SavedModel ...")
      module = HubEncoderModule(pretrainer)
      tf.saved_model.save(module, saved_model, signatures=module.signatures())
      paths = {BASELINE: saved_model, "saved_model_xla": saved_model}
      for precision in tflite_export.PRECISIONS:
        _progress(f"converting to TFLite, {precision} ...")
        path = os.path.join(tmp, f"encoder_{precision}.tflite")
        flatbuffer = tflite_export.convert(
            pretrainer.encoder,
            tflite_export.encoder_outputs,
            seq_length=seq,
            precision=precision,
        )
        tflite_export.write(path, flatbuffer)
        paths[f"tflite_{precision}"] = path
      _progress("loading and warming up ...")
      for name, path in paths.items():
        if name.startswith("tflite"):
          module, mode = tflite_interpreter, threads
        else:
          module, mode = encoder_saved_model, "xla" if "xla" in name else "tf"
        workers.append(
            _worker(name, module, [path, seq, config.vocab_size, mode])
        )
      sizes = {name: _size_mb(path) for name, path in paths.items()}
    _progress(f"timing {len(workers)} processes in turn ...")
    times = turns.take_turns(workers, s.repeats)
  except turns.WorkerError as e:  # a worker process failed: its error line
    raise CommandError(str(e)) from e
  finally:
    finals = {w.name: w.close() for w in workers}

  baseline = np.array(workers[0].info["pooled"])
  report = {
      "seq_length": seq,
      "batch_size": 1,
      "rounds": s.repeats,
      "hidden_size": config.hidden_size,
      "num_layers": config.num_layers,
      "cpu": cpu.to_dict(),
      "cpu_description": cpu.describe(),
  }
  for w in workers:
    info = {k: v for k, v in w.info.items() if k != "pooled"}
    report[w.name] = dict(
        info,
        **finals[w.name],
        latency_ms=1000 * statistics.median(times[w.name]),
        size_mb=sizes[w.name],
        max_abs_diff=float(np.abs(np.array(w.info["pooled"]) - baseline).max()),
        vs_saved_model=turns.paired_ratio(times, w.name, BASELINE),
    )
  return report


def format_report(report: Dict) -> str:
  """The report as docs/serving.md shows it."""
  lines = []
  seq = report["seq_length"]
  names = [
      n for n, r in report.items() if isinstance(r, dict) and "latency_ms" in r
  ]
  lines.append(f"CPU: {report['cpu_description']}")
  lines.append(
      f"ALBERT encoder, hidden {report['hidden_size']}, {report['num_layers']} "
      f"layers, batch 1 x {seq} token ids; median of {report['rounds']} rounds"
  )
  lines.append(
      f"{'':22} {'latency':>10} {'x SavedModel':>13} {'size':>9} "
      f"{'max |diff|':>11}"
  )
  for name in names:
    r = report[name]
    lines.append(
        f"{name:22} {r['latency_ms']:8.2f}ms {r['vs_saved_model']:12.2f}x "
        f"{r['size_mb']:7.1f}MB {r['max_abs_diff']:11.1e}"
    )
  lines.append(
      "x SavedModel: median of the per-round ratios to saved_model "
      "(TensorFlow kernels, no XLA); max |diff|: pooled_output against it"
  )
  return "\n".join(lines)
