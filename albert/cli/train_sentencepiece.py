r"""Trains an ALBERT SentencePiece model: PREFIX.model and PREFIX.vocab.

The original README's settings by default: unigram, <pad>=0, <unk>=1,
[CLS]=2, [SEP]=3, [MASK]=4, no <s>/</s>, user-defined symbols ( ) " - . – £ €,
character coverage 0.99995, trained on a random sample of at most 10,000,000
input lines (memory grows with the sample, not with the corpus):

  python tools/train_sentencepiece.py --input='corpus/*.txt' \
      --model_prefix=spm --vocab_size=30000

`--user_defined_symbols=` (empty) trains without the extra symbols; a list
that contains `"` cannot be passed as a flag (absl parses it as CSV).
"""

from absl import flags
from absl import logging

from albert import cli
from albert.pretraining_data import sentencepiece_trainer as trainer_lib

INPUT = flags.DEFINE_string(
    "input", None, "Text files: comma-separated files/globs."
)
MODEL_PREFIX = flags.DEFINE_string(
    "model_prefix", None, "Writes PREFIX.model and PREFIX.vocab."
)
VOCAB_SIZE = flags.DEFINE_integer("vocab_size", 30000, "Number of pieces.")
MAX_SENTENCES = flags.DEFINE_integer(
    "max_sentences",
    trainer_lib.ORIGINAL_MAX_SENTENCES,
    "Lines sampled from the input for training (original: 10M).",
)
DO_LOWER_CASE = flags.DEFINE_bool(
    "do_lower_case", True, "Lower-case, as create_pretraining_data does."
)
CHARACTER_COVERAGE = flags.DEFINE_float(
    "character_coverage", 0.99995, "Share of characters the vocabulary covers."
)
USER_DEFINED_SYMBOLS = flags.DEFINE_list(
    "user_defined_symbols",
    list(trainer_lib.ORIGINAL_USER_DEFINED_SYMBOLS),
    "Extra pieces that are never split (default: the original's).",
)
HARD_VOCAB_LIMIT = flags.DEFINE_bool(
    "hard_vocab_limit", True, "Fail if the corpus cannot support --vocab_size."
)
MODEL_TYPE = flags.DEFINE_enum(
    "model_type",
    "unigram",
    list(trainer_lib.MODEL_TYPES),
    "SentencePiece algorithm (original: unigram).",
)
SEED = flags.DEFINE_integer("seed", 12345, "Seed of the sentence sample.")
NUM_THREADS = flags.DEFINE_integer(
    "num_threads", 0, "Trainer threads (0: all cores)."
)


def main(argv):
  cli.unexpected_arguments(argv)
  logging.set_verbosity(logging.INFO)
  cli.require_flags("input", "model_prefix")
  trainer_lib.train_sentencepiece(
      input_file=INPUT.value,
      model_prefix=MODEL_PREFIX.value,
      vocab_size=VOCAB_SIZE.value,
      max_sentences=MAX_SENTENCES.value,
      do_lower_case=DO_LOWER_CASE.value,
      character_coverage=CHARACTER_COVERAGE.value,
      user_defined_symbols=USER_DEFINED_SYMBOLS.value,
      hard_vocab_limit=HARD_VOCAB_LIMIT.value,
      seed=SEED.value,
      num_threads=NUM_THREADS.value,
      model_type=MODEL_TYPE.value,
  )


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
