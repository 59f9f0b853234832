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

`--input=documents` measures the documents format instead: its bytes against
offline examples at each of --disk_dupe_factors, and examples/s of the
reader that pairs and masks as it reads against its Python reference and
the offline reader, and the start-up of a resume after --resume_skip
examples (from the stream position, and by skipping them) against a fresh
start, each in a fresh process
(albert/benchmarks/documents.py):

  python tools/benchmark_data.py --input=documents \
      --input_file=bench/corpus.txt --spm_model_file=bench/spm.model --json

`--json` ends the output with one JSON line (`speedup_vs_python_reader`,
`cores_busy`, `documents_resume` and `examples_resume` among its keys).
"""

import json

import os
import tempfile

from absl import flags

from albert import cli
from albert.benchmarks import data
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.worker_pool import default_num_workers
from official.errors import InputError

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
INPUT = flags.DEFINE_enum(
    "input",
    "text",
    ["text", "documents"],
    "text: time create_pretraining_data against the original's algorithm; "
    "documents: the documents format's disk and reader against offline "
    "examples.",
)
DISK_DUPE_FACTORS = flags.DEFINE_list(
    "disk_dupe_factors",
    ["10", "40"],
    "--input=documents: dupe_factors of the offline examples to compare the "
    "disk with.",
)
BATCHES = flags.DEFINE_integer(
    "batches", 500, "--input=documents: timed batches of 32 per reader."
)
RESUME_SKIP = flags.DEFINE_integer(
    "resume_skip",
    1_000_000,
    "--input=documents: examples consumed before the timed resume.",
)
JSON = flags.DEFINE_bool("json", False, "End with the report as one JSON line.")
OUTPUT_DIR = flags.DEFINE_string(
    "output_dir", None, "Where to write (default: a temp dir)."
)


def main(argv):
  cli.unexpected_arguments(argv)
  cli.require_flags("input_file", "spm_model_file")
  workers = NUM_WORKERS.value or default_num_workers()
  out_dir = OUTPUT_DIR.value or tempfile.mkdtemp(prefix="albert_bench_")
  if INPUT.value == "documents":
    try:
      dupes = [int(d) for d in DISK_DUPE_FACTORS.value]
    except ValueError as e:
      raise InputError(f"--disk_dupe_factors: {e}") from e
    if BATCHES.value < 1 or any(d < 1 for d in dupes):
      raise InputError("--batches and --disk_dupe_factors must be >= 1")
    if RESUME_SKIP.value < 0:
      raise InputError("--resume_skip must be >= 0")
    # Imported here: the data writers' worker processes are spawned and
    # import this module again as their main module; at the top, each would
    # load TensorFlow (4-7 s of CPU and about 400 MB) for nothing.
    from albert.benchmarks import documents  # pylint: disable=g-import-not-at-top

    report = documents.measure(
        input_file=INPUT_FILE.value,
        spm_model_file=SPM_MODEL_FILE.value,
        out_dir=out_dir,
        seq_length=MAX_SEQ_LENGTH.value,
        max_predictions_per_seq=MAX_PREDICTIONS_PER_SEQ.value,
        dupe_factors=dupes,
        num_workers=workers,
        batches=BATCHES.value,
        resume_skip=RESUME_SKIP.value,
    )
    print(documents.format_report(report))
    print(f"output in {out_dir}")
    if JSON.value:
      print(json.dumps(report, sort_keys=True))
    return
  config = PretrainingDataConfig(
      max_seq_length=MAX_SEQ_LENGTH.value,
      max_predictions_per_seq=MAX_PREDICTIONS_PER_SEQ.value,
      dupe_factor=DUPE_FACTOR.value,
      block_bytes=int(BLOCK_SIZE_MB.value * (1 << 20)),
  )
  print(
      f"max_seq_length={config.max_seq_length} dupe_factor="
      f"{config.dupe_factor} workers={workers} cores={os.cpu_count()}",
      flush=True,
  )
  baseline_mb = BASELINE_MB.value
  report = data.measure(
      input_file=INPUT_FILE.value,
      spm_model_file=SPM_MODEL_FILE.value,
      config=config,
      num_workers=workers,
      out_dir=out_dir,
      baseline_bytes=None if baseline_mb < 0 else int(baseline_mb * 1e6),
      run_baseline=bool(baseline_mb),
  )
  print(data.format_report(report))
  print(f"output in {out_dir}")
  if JSON.value:
    print(json.dumps(report, sort_keys=True))


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
