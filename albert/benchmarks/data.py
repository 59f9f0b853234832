"""create_pretraining_data against the original's algorithm, each in a fresh
process: the measuring behind `tools/benchmark_data.py` (its --help says what
is measured).
"""

import multiprocessing
import os
import queue as queue_module
import resource
import time
from typing import Dict, Optional

from absl import logging

from albert.pretraining_data import shards
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.original_baseline import run_original_baseline
from albert.pretraining_data.pipeline import create_pretraining_data


def _peak_mb(who) -> float:
  return resource.getrusage(who).ru_maxrss / 1024  # Linux reports KB.


def _run_ours(
    queue, input_file, spm_model_file, output_file, config, num_workers
):
  start = time.perf_counter()
  manifest = create_pretraining_data(
      input_file=input_file,
      output_file=output_file,
      spm_model_file=spm_model_file,
      config=config,
      num_workers=num_workers,
      num_output_shards=max(1, num_workers),
  )
  queue.put(
      {
          "examples": manifest["num_examples"],
          "tokens": manifest["num_tokens"],
          "seconds": time.perf_counter() - start,
          "input_bytes": sum(i["bytes"] for i in manifest["inputs"]),
          "rss_main": _peak_mb(resource.RUSAGE_SELF),
          "rss_worker": _peak_mb(resource.RUSAGE_CHILDREN),
          "mixing": manifest["mixing"]["mean_document_span"],
      }
  )


def _run_baseline(
    queue, input_file, spm_model_file, output_file, config, max_bytes
):
  lines, size = [], 0
  for path, _ in shards.expand_inputs(input_file):
    with open(path, encoding="utf-8") as f:
      for line in f:
        if max_bytes is not None and size >= max_bytes:
          break
        lines.append(line)
        size += len(line.encode("utf-8"))
  result = run_original_baseline(lines, spm_model_file, output_file, config)
  result.update(input_bytes=size, rss_main=_peak_mb(resource.RUSAGE_SELF))
  queue.put(result)


def in_process(target, *args, preload=()):
  """target(queue, *args) in a fresh process; its queued result.

  Without `preload` the process is spawned: a new interpreter, nothing
  imported. With it, a fork server imports `preload` once and each process
  is forked from it, no TensorFlow thread yet started: what a fresh process
  holds after importing those modules, without paying for the import each
  time (4-7 s of CPU for TensorFlow). Only for measurements that all import
  them; a peer that does not (the original's data algorithm) is spawned, or
  its peak RSS would count modules it never loads.
  """
  if preload:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(preload))
  else:
    context = multiprocessing.get_context("spawn")
  queue = context.Queue()
  process = context.Process(target=target, args=(queue,) + args)
  process.start()
  while True:
    try:
      result = queue.get(timeout=1)
      break
    except queue_module.Empty:
      if process.is_alive():
        continue
      try:  # it may have put its result just before it ended
        result = queue.get(timeout=5)
        break
      except queue_module.Empty:
        raise RuntimeError(
            f"{target.__name__} ended without a result (exit code "
            f"{process.exitcode}); its error is above"
        ) from None
  process.join()
  return result


def measure(
    *,
    input_file: str,
    spm_model_file: str,
    config: PretrainingDataConfig,
    num_workers: int,
    out_dir: str,
    baseline_bytes: Optional[int],
    run_baseline: bool = True,
) -> Dict:
  """Runs ours with `num_workers` processes, then (if `run_baseline`) the
  original's algorithm on the first `baseline_bytes` of the corpus (None:
  all of it); each result: examples, tokens, seconds, input bytes, peak RSS."""
  logging.info("Running create_pretraining_data (%d workers) ...", num_workers)
  report = {
      "num_workers": num_workers,
      "ours": in_process(
          _run_ours,
          input_file,
          spm_model_file,
          os.path.join(out_dir, "ours.tfrecord"),
          config,
          num_workers,
      ),
  }
  if run_baseline:
    logging.info("Running the original algorithm in one process ...")
    report["baseline"] = in_process(
        _run_baseline,
        input_file,
        spm_model_file,
        os.path.join(out_dir, "baseline.tfrecord"),
        config,
        baseline_bytes,
    )
  return report


def _rates(name, r, lines):
  rate = r["examples"] / r["seconds"]
  mb = r["input_bytes"] / 1e6
  lines.append(
      f"{name}: {r['examples']:,} examples from {mb:.1f} MB in "
      f"{r['seconds']:.1f} s = {rate:,.0f} examples/s, "
      f"{r['tokens'] / r['seconds'] / 1e3:,.0f}k tokens/s, "
      f"{mb / r['seconds']:.2f} MB/s"
  )
  return rate, r["tokens"] / r["seconds"]


def format_report(report: Dict) -> str:
  """The report as docs/pretraining_data.md shows it."""
  lines = []
  ours, workers = report["ours"], report["num_workers"]
  rate, token_rate = _rates("create_pretraining_data", ours, lines)
  lines.append(
      f"  peak RSS: main {ours['rss_main']:.0f} MB, largest worker "
      f"{ours['rss_worker']:.0f} MB, all processes <= "
      f"{ours['rss_main'] + workers * ours['rss_worker']:.0f} MB"
  )
  lines.append(
      f"  per core: {rate / workers:,.0f} examples/s; mixing (mean "
      f"document span, ~0.8 when shuffled): {ours['mixing']:.2f}"
  )
  if "baseline" in report:
    base = report["baseline"]
    base_rate, base_token_rate = _rates(
        "original algorithm, 1 process (baseline)", base, lines
    )
    lines.append(f"  peak RSS: {base['rss_main']:.0f} MB (with TensorFlow)")
    lines.append(
        f"speed-up: {rate / base_rate:.1f}x examples/s, "
        f"{token_rate / base_token_rate:.1f}x tokens/s; per core "
        f"{rate / workers / base_rate:.1f}x examples/s, "
        f"{token_rate / workers / base_token_rate:.1f}x tokens/s"
    )
  return "\n".join(lines)
