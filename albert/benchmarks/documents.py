"""The documents format against offline examples: disk, and the reader's
examples/s: the measuring behind `tools/benchmark_data.py --input=documents`.

1. The corpus is written once as documents and as offline examples at each
   of `dupe_factors` (bytes on disk, time to write).
2. Three readers each run in a fresh process, training mode, after a
   warm-up that fills the shuffle buffer: the documents reader
   (`documents_data.documents_dataset`: pairing and masking in TensorFlow
   ops), the same reader in Python (`python_reader`, the reference: the
   offline generator's code through `tf.numpy_function`, under Python's
   GIL) and the offline reader (`data.pretraining_dataset` of the dupe-1
   examples). Measured: examples/s (wall) and CPU seconds of the process;
   cores busy = CPU seconds / wall seconds, per core = examples per
   CPU-second. `speedup_vs_python_reader` is the documents reader's
   examples/s over the Python reader's.
3. The start-up of a resume: seconds to the first batch of the training
   stream after `resume_skip` examples against a fresh start, both formats,
   each in a fresh process: from the stream position (what the trainer
   checkpoints; `official.core.seekable_stream`) and, for comparison, by
   skipping the examples; the two must give the same batch.
"""

import dataclasses
import glob
import os
import time
from typing import Dict, Sequence

from absl import logging
import numpy as np

from albert.pretraining import data
from albert.pretraining import documents_data
from albert.benchmarks.data import in_process
from albert.benchmarks.python_reader import python_documents_dataset
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.pipeline import create_pretraining_data
from official.benchmark import cpu_info
from official.core.host import available_cores
from official.core.seekable_stream import POSITION
from official.core.seekable_stream import StreamPosition


# Every reader measured here runs on TensorFlow: its processes fork from one
# that imported this module (and so TensorFlow) once.
_PRELOAD = (__name__,)


def _bytes(pattern: str) -> int:
  return sum(os.path.getsize(p) for p in glob.glob(pattern))


def _write(input_file, spm_model_file, out_dir, config, num_workers) -> Dict:
  start = time.perf_counter()
  os.makedirs(out_dir, exist_ok=True)
  manifest = create_pretraining_data(
      input_file=input_file,
      output_file=os.path.join(out_dir, "data.tfrecord"),
      spm_model_file=spm_model_file,
      config=config,
      num_workers=num_workers,
      num_output_shards=2,
  )
  return {
      "seconds": time.perf_counter() - start,
      "bytes": _bytes(os.path.join(out_dir, "data-*")),
      "pool_bytes": _bytes(os.path.join(out_dir, "*.npz")),
      "records": manifest.get("num_examples", manifest.get("num_documents")),
  }


def _read(queue, data_format, pattern, seq_length, predictions, batch, n):
  """A fresh process: warm-up, then `n` timed batches of one reader."""
  common = dict(
      seq_length=seq_length,
      max_predictions_per_seq=predictions,
      batch_size=batch,
      training=True,
      seed=1,
  )
  if data_format == "documents":
    dataset = documents_data.documents_dataset(
        pattern, sentence_task="sop", **common
    )
  elif data_format == "python_documents":
    del common["training"]
    dataset = python_documents_dataset(pattern, sentence_task="sop", **common)
  else:
    dataset = data.pretraining_dataset(pattern, **common)
  iterator = iter(dataset)
  for _ in range(10000 // batch + 20):  # Fills the shuffle buffer.
    next(iterator)
  wall, cpu = time.perf_counter(), time.process_time()
  for _ in range(n):
    next(iterator)
  wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
  queue.put({"examples": n * batch, "seconds": wall, "cpu_seconds": cpu})


def _first_batch(queue, data_format, pattern, seq_length, predictions, skip):
  """A fresh process: seconds to the first batch of the training stream,
  fresh, and after `skip` examples (a resume at that point) in two ways:
  from the stream position the trainer checkpoints, and by skipping what
  was consumed (what a checkpoint without positions does). Both must give
  the same batch."""
  common = dict(
      seq_length=seq_length,
      max_predictions_per_seq=predictions,
      batch_size=32,
      training=True,
      seed=1,
  )

  def first(**resume):
    start = time.perf_counter()
    if data_format == "documents":
      dataset = documents_data.documents_dataset(
          pattern, sentence_task="sop", **resume, **common
      )
    else:
      dataset = data.pretraining_dataset(pattern, **resume, **common)
    batch = {k: v.numpy() for k, v in next(iter(dataset)).items()}
    return time.perf_counter() - start, batch

  first()  # The first build of the process pays for tracing: a warm-up.
  seconds = {"fresh": first()[0]}
  seconds["skipped"], by_skip = first(skip_examples=skip)
  # Where the skipped stream's first example is: the position its
  # predecessor carried.
  row = by_skip[POSITION][0]
  start = StreamPosition(*(int(v) for v in row[1:4]), int(row[4]) - 1)
  seconds["resumed"], by_position = first(start=start)
  for name, value in by_skip.items():
    if not np.array_equal(value, by_position[name]):
      raise AssertionError(
          f"{data_format}: resuming at {start} gives another {name} than "
          f"skipping {skip} examples"
      )
  seconds["position"] = dataclasses.astuple(start)
  queue.put(seconds)


def measure(
    *,
    input_file: str,
    spm_model_file: str,
    out_dir: str,
    seq_length: int,
    max_predictions_per_seq: int,
    dupe_factors: Sequence[int],
    num_workers: int,
    batch_size: int = 32,
    batches: int = 200,
    resume_skip: int = 1_000_000,
) -> Dict:
  """Writes both formats, then times both readers; returns the report."""
  common = dict(
      max_seq_length=seq_length, max_predictions_per_seq=max_predictions_per_seq
  )
  logging.info("Writing the documents format ...")
  report = {
      "cpu": cpu_info.read().model,
      "seq_length": seq_length,
      "max_predictions_per_seq": max_predictions_per_seq,
      "batch_size": batch_size,
      "documents_write": _write(
          input_file,
          spm_model_file,
          os.path.join(out_dir, "documents"),
          PretrainingDataConfig(
              output_format="documents", dupe_factor=1, **common
          ),
          num_workers,
      ),
      "examples_write": {},
  }
  for dupe in sorted(set([1, *dupe_factors])):
    logging.info("Writing offline examples, dupe_factor %d ...", dupe)
    report["examples_write"][str(dupe)] = _write(
        input_file,
        spm_model_file,
        os.path.join(out_dir, f"examples-dupe{dupe}"),
        PretrainingDataConfig(dupe_factor=dupe, **common),
        num_workers,
    )
  for data_format, directory in (
      ("documents", "documents"),
      ("python_documents", "documents"),
      ("examples", "examples-dupe1"),
  ):
    pattern = os.path.join(out_dir, directory, "data-*")
    shape = (seq_length, max_predictions_per_seq)
    logging.info("Reading %s ...", data_format)
    result = in_process(
        _read,
        data_format,
        pattern,
        *shape,
        batch_size,
        batches,
        preload=_PRELOAD,
    )
    result["examples_per_s"] = result["examples"] / result["seconds"]
    result["examples_per_cpu_s"] = result["examples"] / result["cpu_seconds"]
    result["cores_busy"] = result["cpu_seconds"] / result["seconds"]
    report[f"{data_format}_read"] = result
    if data_format != "python_documents":
      logging.info(
          "Resuming %s after %d examples ...", data_format, resume_skip
      )
      seconds = in_process(
          _first_batch,
          data_format,
          pattern,
          *shape,
          resume_skip,
          preload=_PRELOAD,
      )
      seconds["ratio"] = seconds["resumed"] / seconds["fresh"]
      seconds["skip_ratio"] = seconds["skipped"] / seconds["fresh"]
      report[f"{data_format}_resume"] = seconds
  report["resume_skip"] = resume_skip
  docs, offline = report["documents_read"], report["examples_read"]
  python = report["python_documents_read"]
  documents_bytes = (
      report["documents_write"]["bytes"]
      + report["documents_write"]["pool_bytes"]
  )
  report.update(
      examples_per_s=docs["examples_per_s"],
      examples_per_s_per_core=docs["examples_per_cpu_s"],
      offline_examples_per_s=offline["examples_per_s"],
      offline_examples_per_s_per_core=offline["examples_per_cpu_s"],
      cores_busy=docs["cores_busy"],
      python_examples_per_s=python["examples_per_s"],
      speedup_vs_python_reader=(
          docs["examples_per_s"] / python["examples_per_s"]
      ),
      documents_bytes=documents_bytes,
      disk_ratio={
          dupe: documents_bytes / written["bytes"]
          for dupe, written in report["examples_write"].items()
      },
  )
  return report


def format_report(report: Dict) -> str:
  lines = [
      f"CPU: {report['cpu']}; seq {report['seq_length']}, "
      f"{report['max_predictions_per_seq']} predictions, batch "
      f"{report['batch_size']}"
  ]
  docs = report["documents_write"]
  lines.append(
      f"documents: {docs['records']:,} documents, "
      f"{docs['bytes'] / 1e6:.1f} MB + random-document pool "
      f"{docs['pool_bytes'] / 1e6:.1f} MB, written in {docs['seconds']:.1f} s"
  )
  for dupe, written in report["examples_write"].items():
    lines.append(
        f"examples, dupe_factor {dupe}: {written['records']:,} examples, "
        f"{written['bytes'] / 1e6:.1f} MB, written in "
        f"{written['seconds']:.1f} s; documents are "
        f"{report['disk_ratio'][dupe]:.3f}x its bytes "
        f"(1/dupe = {1 / int(dupe):.3f})"
    )
  names = {
      "documents": "documents reader (TensorFlow ops)",
      "python_documents": "documents reader in Python (reference)",
      "examples": "offline examples reader",
  }
  for name, title in names.items():
    r = report[f"{name}_read"]
    lines.append(
        f"{title}: {r['examples_per_s']:,.0f} examples/s, "
        f"{r['cores_busy']:.2f} cores busy, "
        f"{r['examples_per_cpu_s']:,.0f} examples per CPU-second"
    )
  for name in ("documents", "examples"):
    r = report[f"{name}_resume"]
    lines.append(
        f"{name}: first batch {r['fresh']:.2f} s fresh; after "
        f"{report['resume_skip']:,} examples {r['resumed']:.2f} s from the "
        f"stream position ({r['ratio']:.2f}x, target <= 1.5x), "
        f"{r['skipped']:.2f} s by skipping them ({r['skip_ratio']:.1f}x)"
    )
  lines.append(
      f"documents reader: {report['speedup_vs_python_reader']:.2f}x the "
      f"Python reader's examples/s on {available_cores()} cores "
      f"(target >= 1.5x), {report['cores_busy']:.2f} cores busy"
  )
  return "\n".join(lines)
