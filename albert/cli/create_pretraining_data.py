r"""Creates ALBERT pretraining TFRecords (MLM + SOP) from a text corpus.

Input: text files, one sentence per line, a blank line between documents.
Output: sharded TFRecords with the original tool's features, and a
manifest.json. The original's flags keep their names and defaults.

  python tools/create_pretraining_data.py \
      --input_file='corpus/*.txt' --output_file=data/train.tfrecord \
      --spm_model_file=spm.model --num_output_shards=8

Same inputs, flags and seed give byte-identical shards whatever
--num_workers is. `--runner=DirectRunner` (or DataflowRunner, FlinkRunner,
SparkRunner, ...) runs the same generation as an Apache Beam pipeline.
See docs/pretraining_data.md.
"""

import os
import shlex

from absl import flags
from absl import logging

from albert import cli
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.data_config import SENTENCE_TASKS
from albert.pretraining_data.data_config import SINGLE_SEGMENT_RULES
from albert.pretraining_data.pipeline import create_pretraining_data
from official import errors
from official.errors import InputError

FLAGS = flags.FLAGS

# The original tool's flags, names and defaults unchanged.
flags.DEFINE_string(
    "input_file", None, "Input text file(s): comma-separated files or globs."
)
flags.DEFINE_string(
    "output_file", None, "Output TFRecord file, or comma-separated shard names."
)
flags.DEFINE_string(
    "vocab_file", None, "Optional; the vocabulary comes from --spm_model_file."
)
flags.DEFINE_string("spm_model_file", None, "SentencePiece model.")
flags.DEFINE_string(
    "input_file_mode",
    "r",
    "Accepted for compatibility; input is read as UTF-8.",
)
flags.DEFINE_bool("do_lower_case", True, "Lower-case the input text.")
flags.DEFINE_bool(
    "do_whole_word_mask", True, "Mask whole words rather than single pieces."
)
flags.DEFINE_bool("do_permutation", False, "Not supported (must be False).")
flags.DEFINE_bool(
    "favor_shorter_ngram",
    True,
    "p(n) ~ 1/n for masked n-grams (else favour longer ones).",
)
flags.DEFINE_bool(
    "random_next_sentence",
    False,
    "BERT's NSP: B from a random document (= --sentence_task=nsp).",
)
flags.DEFINE_integer("max_seq_length", 512, "Maximum sequence length.")
flags.DEFINE_integer("ngram", 3, "Longest masked n-gram, in whole words.")
flags.DEFINE_integer(
    "max_predictions_per_seq",
    20,
    "Maximum number of masked positions per sequence.",
)
flags.DEFINE_integer("random_seed", 12345, "Seed of every random draw.")
flags.DEFINE_integer(
    "dupe_factor", 40, "Passes over the corpus, each with new pairs and masks."
)
flags.DEFINE_float("masked_lm_prob", 0.15, "Masked LM probability.")
flags.DEFINE_float(
    "short_seq_prob", 0.1, "Probability of a shorter target sequence length."
)
flags.DEFINE_bool(
    "parallel", False, "Accepted for compatibility; see --num_workers."
)

# What scale needs.
flags.DEFINE_enum(
    "sentence_task",
    None,
    list(SENTENCE_TASKS),
    "Sentence-level task: sop (default), nsp or none (paper Table 5).",
)
flags.DEFINE_enum(
    "single_segment",
    "split",
    list(SINGLE_SEGMENT_RULES),
    "SOP chunks of one segment: split (cut at a word start; default) or "
    "random_document (the original: B from a random document, label 1).",
)
flags.DEFINE_integer(
    "document_pool_size",
    10000,
    "Documents sampled from every block of the corpus to draw random B from "
    "(nsp, random_document). Changes the output.",
)
flags.DEFINE_integer(
    "num_output_shards",
    1,
    "Number of output files for a single --output_file; each is a uniform "
    "random sample of all examples, in random order.",
)
flags.DEFINE_float(
    "shuffle_memory_mb",
    512,
    "Records held at once while a shard is written (larger shards are "
    "written in parts). Does not change the output.",
)
flags.DEFINE_integer(
    "num_workers",
    None,
    "Worker processes (default: all cores). Does not change the output.",
)
flags.DEFINE_bool("gzip", False, "Write gzip-compressed TFRecords.")
flags.DEFINE_float(
    "block_size_mb",
    2.0,
    "Corpus block size: the unit of parallel work. Changes the output.",
)
flags.DEFINE_string(
    "manifest_file", None, "Default: manifest.json beside the first shard."
)
flags.DEFINE_string(
    "runner",
    "local",
    "'local' (processes on this machine) or an Apache Beam "
    "runner: DirectRunner, DataflowRunner, FlinkRunner, ...",
)
flags.DEFINE_string(
    "beam_pipeline_options",
    "",
    "Extra Beam pipeline options, e.g. "
    '"--project=p --region=r --temp_location=gs://b/tmp".',
)


def _sentence_task() -> str:
  if FLAGS.random_next_sentence:
    if FLAGS.sentence_task not in (None, "nsp"):
      raise InputError(
          f"--random_next_sentence=True asks for NSP but "
          f"--sentence_task={FLAGS.sentence_task}"
      )
    return "nsp"
  return FLAGS.sentence_task or "sop"


def config_from_flags() -> PretrainingDataConfig:
  """The generation options; raises InputError for bad values."""
  cli.require_flags("input_file", "output_file", "spm_model_file")
  if FLAGS.do_permutation:
    raise InputError("--do_permutation=True is not supported")
  if FLAGS.vocab_file and not os.path.isfile(FLAGS.vocab_file):
    raise InputError(f"--vocab_file {FLAGS.vocab_file} does not exist")
  if not FLAGS.block_size_mb > 0:
    raise InputError(f"block_size_mb={FLAGS.block_size_mb} must be > 0")
  return PretrainingDataConfig(
      max_seq_length=FLAGS.max_seq_length,
      max_predictions_per_seq=FLAGS.max_predictions_per_seq,
      random_seed=FLAGS.random_seed,
      dupe_factor=FLAGS.dupe_factor,
      masked_lm_prob=FLAGS.masked_lm_prob,
      short_seq_prob=FLAGS.short_seq_prob,
      ngram=FLAGS.ngram,
      favor_shorter_ngram=FLAGS.favor_shorter_ngram,
      do_lower_case=FLAGS.do_lower_case,
      do_whole_word_mask=FLAGS.do_whole_word_mask,
      sentence_task=_sentence_task(),
      block_bytes=max(1, int(FLAGS.block_size_mb * (1 << 20))),
      single_segment=FLAGS.single_segment,
      document_pool_size=FLAGS.document_pool_size,
  )


def main(argv):
  cli.unexpected_arguments(argv)
  logging.set_verbosity(logging.INFO)
  config = config_from_flags()
  common = dict(
      input_file=FLAGS.input_file,
      output_file=FLAGS.output_file,
      spm_model_file=FLAGS.spm_model_file,
      config=config,
      num_output_shards=FLAGS.num_output_shards,
      gzip=FLAGS.gzip,
      manifest_file=FLAGS.manifest_file,
  )
  if FLAGS.runner == "local":
    if FLAGS.num_workers is not None and FLAGS.num_workers < 1:
      raise InputError(f"num_workers={FLAGS.num_workers} must be >= 1")
    try:
      create_pretraining_data(
          num_workers=FLAGS.num_workers,
          shuffle_memory_mb=FLAGS.shuffle_memory_mb,
          **common,
      )
    except OSError as e:  # the finished blocks are kept: a rerun resumes
      message = errors.describe(e)
      if "rerun" not in message:
        message += "; run the same command again to resume once fixed"
      raise InputError(message) from e
  else:
    from albert.pretraining_data import beam_pipeline

    beam_pipeline.run(
        runner=FLAGS.runner,
        pipeline_args=shlex.split(FLAGS.beam_pipeline_options),
        **common,
    )


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
