r"""Creates ALBERT pretraining TFRecords (MLM + SOP) from a text corpus.

Input: text files, one sentence per line, a blank line between documents.
Output: sharded TFRecords with the original tool's features, and a
manifest.json. The original's flags keep their names and defaults.

  python tools/create_pretraining_data.py \
      --input_file='corpus/*.txt' --output_file=data/train.tfrecord \
      --spm_model_file=spm.model --num_output_shards=8

As in the original, --vocab_file without --spm_model_file tokenizes with
WordPiece (a BERT-style vocab.txt, as the Chinese ALBERTs use): words are
whole WordPiece runs (`##` continues one), each Chinese character a word.

`--output_format=documents` writes each document once, tokenized, for
the trainer to pair and mask as it reads (a dupe_factor-th of the disk, new
masks every epoch; PretrainTask.input_format='documents').

Same inputs, flags and seed give byte-identical shards whatever
--num_workers is. `--runner=DirectRunner` (or DataflowRunner, FlinkRunner,
SparkRunner, ...) runs the same generation as an Apache Beam pipeline.
See docs/pretraining_data.md.
"""

import shlex

from absl import flags
from absl import logging

from albert import cli
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.data_config import OUTPUT_FORMATS
from albert.pretraining_data.data_config import SENTENCE_TASKS
from albert.pretraining_data.data_config import SINGLE_SEGMENT_RULES
from albert.pretraining_data.pipeline import create_pretraining_data
from albert.text import tokenizers
from official import errors
from official.errors import InputError


# The original tool's flags, names and defaults unchanged.
INPUT_FILE = flags.DEFINE_string(
    "input_file", None, "Input text file(s): comma-separated files or globs."
)
OUTPUT_FILE = flags.DEFINE_string(
    "output_file", None, "Output TFRecord file, or comma-separated shard names."
)
VOCAB_FILE = flags.DEFINE_string(
    "vocab_file",
    None,
    "WordPiece vocab.txt (used when --spm_model_file is not given); beside "
    "--spm_model_file, that model's own .vocab listing.",
)
SPM_MODEL_FILE = flags.DEFINE_string(
    "spm_model_file", None, "SentencePiece model."
)
INPUT_FILE_MODE = flags.DEFINE_string(
    "input_file_mode",
    "r",
    "Accepted for compatibility; input is read as UTF-8.",
)
DO_LOWER_CASE = flags.DEFINE_bool(
    "do_lower_case", True, "Lower-case the input text."
)
DO_WHOLE_WORD_MASK = flags.DEFINE_bool(
    "do_whole_word_mask", True, "Mask whole words rather than single pieces."
)
DO_PERMUTATION = flags.DEFINE_bool(
    "do_permutation", False, "Not supported (must be False)."
)
FAVOR_SHORTER_NGRAM = flags.DEFINE_bool(
    "favor_shorter_ngram",
    True,
    "p(n) ~ 1/n for masked n-grams (else favour longer ones).",
)
RANDOM_NEXT_SENTENCE = flags.DEFINE_bool(
    "random_next_sentence",
    False,
    "BERT's NSP: B from a random document (= --sentence_task=nsp).",
)
MAX_SEQ_LENGTH = flags.DEFINE_integer(
    "max_seq_length", 512, "Maximum sequence length."
)
NGRAM = flags.DEFINE_integer(
    "ngram", 3, "Longest masked n-gram, in whole words."
)
MAX_PREDICTIONS_PER_SEQ = flags.DEFINE_integer(
    "max_predictions_per_seq",
    20,
    "Maximum number of masked positions per sequence.",
)
RANDOM_SEED = flags.DEFINE_integer(
    "random_seed", 12345, "Seed of every random draw."
)
DUPE_FACTOR = flags.DEFINE_integer(
    "dupe_factor", 40, "Passes over the corpus, each with new pairs and masks."
)
MASKED_LM_PROB = flags.DEFINE_float(
    "masked_lm_prob", 0.15, "Masked LM probability."
)
SHORT_SEQ_PROB = flags.DEFINE_float(
    "short_seq_prob", 0.1, "Probability of a shorter target sequence length."
)
PARALLEL = flags.DEFINE_bool(
    "parallel", False, "Accepted for compatibility; see --num_workers."
)

# What scale needs.
SENTENCE_TASK = flags.DEFINE_enum(
    "sentence_task",
    None,
    list(SENTENCE_TASKS),
    "Sentence-level task: sop (default), nsp or none (paper Table 5).",
)
SINGLE_SEGMENT = flags.DEFINE_enum(
    "single_segment",
    None,
    list(SINGLE_SEGMENT_RULES),
    "SOP chunks of one segment: random_document (the original's rule, the "
    "default: B from a random document, label 1) or split (ours: cut at a "
    "word start into an in-order or swapped pair; the default for "
    "--sentence_task=none).",
)
DOCUMENT_POOL_SIZE = flags.DEFINE_integer(
    "document_pool_size",
    10000,
    "Documents sampled from every block of the corpus to draw random B from "
    "(nsp, random_document). Changes the output.",
)
OUTPUT_FORMAT = flags.DEFINE_enum(
    "output_format",
    "examples",
    list(OUTPUT_FORMATS),
    "examples (the original's records: --dupe_factor copies of every "
    "document, paired and masked) or documents (each document once, "
    "tokenized; PretrainTask.input_format='documents' pairs and masks it "
    "as it reads, anew every epoch). See docs/pretraining_data.md.",
)
NUM_OUTPUT_SHARDS = flags.DEFINE_integer(
    "num_output_shards",
    1,
    "Number of output files for a single --output_file; each is a uniform "
    "random sample of all examples, in random order.",
)
SHUFFLE_MEMORY_MB = flags.DEFINE_float(
    "shuffle_memory_mb",
    512,
    "Records held at once while a shard is written (larger shards are "
    "written in parts). Does not change the output.",
)
NUM_WORKERS = flags.DEFINE_integer(
    "num_workers",
    None,
    "Worker processes (default: all cores). Does not change the output.",
)
GZIP = flags.DEFINE_bool("gzip", False, "Write gzip-compressed TFRecords.")
BLOCK_SIZE_MB = flags.DEFINE_float(
    "block_size_mb",
    2.0,
    "Corpus block size: the unit of parallel work. Changes the output.",
)
MANIFEST_FILE = flags.DEFINE_string(
    "manifest_file", None, "Default: manifest.json beside the first shard."
)
RUNNER = flags.DEFINE_string(
    "runner",
    "local",
    "'local' (processes on this machine) or an Apache Beam "
    "runner: DirectRunner, DataflowRunner, FlinkRunner, ...",
)
BEAM_PIPELINE_OPTIONS = flags.DEFINE_string(
    "beam_pipeline_options",
    "",
    "Extra Beam pipeline options, e.g. "
    '"--project=p --region=r --temp_location=gs://b/tmp".',
)


def _sentence_task() -> str:
  if RANDOM_NEXT_SENTENCE.value:
    if SENTENCE_TASK.value not in (None, "nsp"):
      raise InputError(
          f"--random_next_sentence=True asks for NSP but "
          f"--sentence_task={SENTENCE_TASK.value}"
      )
    return "nsp"
  return SENTENCE_TASK.value or "sop"


def config_from_flags() -> PretrainingDataConfig:
  """The generation options; raises InputError for bad values."""
  cli.require_flags("input_file", "output_file")
  tokenizers.choose(SPM_MODEL_FILE.value, VOCAB_FILE.value)
  if DO_PERMUTATION.value:
    raise InputError("--do_permutation=True is not supported")
  if not BLOCK_SIZE_MB.value > 0:
    raise InputError(f"block_size_mb={BLOCK_SIZE_MB.value} must be > 0")
  dupe_factor = DUPE_FACTOR.value
  if OUTPUT_FORMAT.value == "documents":
    if flags.FLAGS["dupe_factor"].present:
      raise InputError(
          f"--dupe_factor={dupe_factor} does not apply to "
          "--output_format=documents: each document is written once and the "
          "reader draws new pairs and masks every epoch; leave it out"
      )
    dupe_factor = 1
  return PretrainingDataConfig(
      output_format=OUTPUT_FORMAT.value,
      max_seq_length=MAX_SEQ_LENGTH.value,
      max_predictions_per_seq=MAX_PREDICTIONS_PER_SEQ.value,
      random_seed=RANDOM_SEED.value,
      dupe_factor=dupe_factor,
      masked_lm_prob=MASKED_LM_PROB.value,
      short_seq_prob=SHORT_SEQ_PROB.value,
      ngram=NGRAM.value,
      favor_shorter_ngram=FAVOR_SHORTER_NGRAM.value,
      do_lower_case=DO_LOWER_CASE.value,
      do_whole_word_mask=DO_WHOLE_WORD_MASK.value,
      sentence_task=_sentence_task(),
      block_bytes=max(1, int(BLOCK_SIZE_MB.value * (1 << 20))),
      single_segment=SINGLE_SEGMENT.value,
      document_pool_size=DOCUMENT_POOL_SIZE.value,
  )


def main(argv):
  cli.unexpected_arguments(argv)
  logging.set_verbosity(logging.INFO)
  config = config_from_flags()
  common = dict(
      input_file=INPUT_FILE.value,
      output_file=OUTPUT_FILE.value,
      config=config,
      num_output_shards=NUM_OUTPUT_SHARDS.value,
      gzip=GZIP.value,
      manifest_file=MANIFEST_FILE.value,
  )
  if RUNNER.value == "local":
    if NUM_WORKERS.value is not None and NUM_WORKERS.value < 1:
      raise InputError(f"num_workers={NUM_WORKERS.value} must be >= 1")
    tokenizer_file = tokenizers.read_file(
        SPM_MODEL_FILE.value, VOCAB_FILE.value
    )
    try:
      create_pretraining_data(
          tokenizer_file=tokenizer_file,
          num_workers=NUM_WORKERS.value,
          shuffle_memory_mb=SHUFFLE_MEMORY_MB.value,
          **common,
      )
    except OSError as e:  # the finished blocks are kept: a rerun resumes
      message = errors.describe(e)
      if "rerun" not in message:
        message += "; run the same command again to resume once fixed"
      raise InputError(message) from e
  else:
    # Imported here: Apache Beam is an optional dependency (the [beam] extra),
    # needed only by --runner other than local.
    from albert.pretraining_data import beam_pipeline

    beam_pipeline.run(
        spm_model_file=SPM_MODEL_FILE.value,
        vocab_file=VOCAB_FILE.value,
        runner=RUNNER.value,
        pipeline_args=shlex.split(BEAM_PIPELINE_OPTIONS.value),
        **common,
    )


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
