r"""Benchmarks create_pretraining_data against the original's algorithm.

Reports examples/s, input MB/s and peak RSS of the sharded, multi-process
generator, then runs a straightforward single-process, whole-corpus-in-memory
re-implementation of the original tool (albert/pretraining_data/
original_baseline.py) on the same corpus (or its first --baseline_mb) in the
same run, for a speed ratio. Each run is a fresh process, so its peak RSS is
its own.

  python tools/benchmark_data.py --input_file=bench/corpus.txt \
      --spm_model_file=bench/spm.model --dupe_factor=1

(`bench/` stands for any corpus and its SentencePiece model; the figures in
docs/pretraining_data.md use the corpus described in docs/reference.md
section 8.)
"""

import multiprocessing
import os
import resource
import tempfile
import time

from absl import flags

from albert import cli
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.pipeline import create_pretraining_data
from albert.pretraining_data.pipeline import default_num_workers

INPUT_FILE = flags.DEFINE_string("input_file", None, "Corpus (files or globs).")
SPM_MODEL_FILE = flags.DEFINE_string(
    "spm_model_file", None, "SentencePiece model."
)
MAX_SEQ_LENGTH = flags.DEFINE_integer("max_seq_length", 512, "Sequence length.")
MAX_PREDICTIONS_PER_SEQ = flags.DEFINE_integer(
    "max_predictions_per_seq", 20, "Masked positions."
)
DUPE_FACTOR = flags.DEFINE_integer("dupe_factor", 1, "Passes over the corpus.")
NUM_WORKERS = flags.DEFINE_integer(
    "num_workers", None, "Processes (default: all cores)."
)
BLOCK_SIZE_MB = flags.DEFINE_float("block_size_mb", 2.0, "Corpus block size.")
BASELINE_MB = flags.DEFINE_float(
    "baseline_mb",
    4.0,
    "Run the baseline on the first MB of the corpus (whole "
    "lines); 0 skips it, -1 runs it on everything.",
)
OUTPUT_DIR = flags.DEFINE_string(
    "output_dir", None, "Where to write (default: a temp dir)."
)


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
  from albert.pretraining_data import shards
  from albert.pretraining_data.original_baseline import run_original_baseline

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


def _in_process(target, *args):
  context = multiprocessing.get_context("spawn")
  queue = context.Queue()
  process = context.Process(target=target, args=(queue,) + args)
  process.start()
  result = queue.get()
  process.join()
  return result


def _report(name, r):
  rate = r["examples"] / r["seconds"]
  mb = r["input_bytes"] / 1e6
  print(
      f"{name}: {r['examples']:,} examples from {mb:.1f} MB in "
      f"{r['seconds']:.1f} s = {rate:,.0f} examples/s, "
      f"{r['tokens'] / r['seconds'] / 1e3:,.0f}k tokens/s, "
      f"{mb / r['seconds']:.2f} MB/s"
  )
  return rate, r["tokens"] / r["seconds"]


def main(argv):
  cli.unexpected_arguments(argv)
  cli.require_flags("input_file", "spm_model_file")
  workers = NUM_WORKERS.value or default_num_workers()
  config = PretrainingDataConfig(
      max_seq_length=MAX_SEQ_LENGTH.value,
      max_predictions_per_seq=MAX_PREDICTIONS_PER_SEQ.value,
      dupe_factor=DUPE_FACTOR.value,
      block_bytes=int(BLOCK_SIZE_MB.value * (1 << 20)),
  )
  out_dir = OUTPUT_DIR.value or tempfile.mkdtemp(prefix="albert_bench_")
  print(
      f"max_seq_length={config.max_seq_length} dupe_factor="
      f"{config.dupe_factor} workers={workers} cores={os.cpu_count()}"
  )
  ours = _in_process(
      _run_ours,
      INPUT_FILE.value,
      SPM_MODEL_FILE.value,
      os.path.join(out_dir, "ours.tfrecord"),
      config,
      workers,
  )
  rate, token_rate = _report("create_pretraining_data", ours)
  print(
      f"  peak RSS: main {ours['rss_main']:.0f} MB, largest worker "
      f"{ours['rss_worker']:.0f} MB, all processes <= "
      f"{ours['rss_main'] + workers * ours['rss_worker']:.0f} MB"
  )
  print(
      f"  per core: {rate / workers:,.0f} examples/s; mixing (mean "
      f"document span, ~0.8 when shuffled): {ours['mixing']:.2f}"
  )
  if BASELINE_MB.value:
    max_bytes = None if BASELINE_MB.value < 0 else int(BASELINE_MB.value * 1e6)
    base = _in_process(
        _run_baseline,
        INPUT_FILE.value,
        SPM_MODEL_FILE.value,
        os.path.join(out_dir, "baseline.tfrecord"),
        config,
        max_bytes,
    )
    base_rate, base_token_rate = _report(
        "original algorithm, 1 process (baseline)", base
    )
    print(f"  peak RSS: {base['rss_main']:.0f} MB (with TensorFlow)")
    print(
        f"speed-up: {rate / base_rate:.1f}x examples/s, "
        f"{token_rate / base_token_rate:.1f}x tokens/s; per core "
        f"{rate / workers / base_rate:.1f}x examples/s, "
        f"{token_rate / workers / base_token_rate:.1f}x tokens/s"
    )
  print(f"output in {out_dir}")


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
