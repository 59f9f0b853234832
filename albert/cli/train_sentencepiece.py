r"""Trains an ALBERT SentencePiece model: PREFIX.model and PREFIX.vocab.

Unigram, <pad>=0, <unk>=1, [CLS]=2, [SEP]=3, [MASK]=4, no <s>/</s>, from a
bounded random sample of the input lines (memory does not grow with the
corpus):

  python tools/train_sentencepiece.py --input='corpus/*.txt' \
      --model_prefix=spm --vocab_size=30000
"""

import sys


from absl import flags
from absl import logging

from albert import cli
from official.core.errors import InputError
from albert.pretraining_data.sentencepiece_trainer import train_sentencepiece

FLAGS = flags.FLAGS
flags.DEFINE_string("input", None, "Text files: comma-separated files/globs.")
flags.DEFINE_string(
    "model_prefix", None, "Writes PREFIX.model and PREFIX.vocab."
)
flags.DEFINE_integer("vocab_size", 30000, "Number of pieces.")
flags.DEFINE_integer(
    "max_sentences", 1_000_000, "Lines sampled from the input for training."
)
flags.DEFINE_bool(
    "do_lower_case", True, "Lower-case, as create_pretraining_data does."
)
flags.DEFINE_float(
    "character_coverage", 0.99995, "Share of characters the vocabulary covers."
)
flags.DEFINE_list(
    "user_defined_symbols", [], "Extra pieces that are never split."
)
flags.DEFINE_bool(
    "hard_vocab_limit", True, "Fail if the corpus cannot support --vocab_size."
)
flags.DEFINE_integer("seed", 12345, "Seed of the sentence sample.")
flags.DEFINE_integer("num_threads", 0, "Trainer threads (0: all cores).")


def main(argv):
  if len(argv) > 1:
    sys.exit(f"train_sentencepiece: error: unexpected arguments {argv[1:]}")
  logging.set_verbosity(logging.INFO)
  try:
    for name in ("input", "model_prefix"):
      if not FLAGS[name].value:
        raise InputError(f"--{name} is required")
    train_sentencepiece(
        input_file=FLAGS.input,
        model_prefix=FLAGS.model_prefix,
        vocab_size=FLAGS.vocab_size,
        max_sentences=FLAGS.max_sentences,
        do_lower_case=FLAGS.do_lower_case,
        character_coverage=FLAGS.character_coverage,
        user_defined_symbols=FLAGS.user_defined_symbols,
        hard_vocab_limit=FLAGS.hard_vocab_limit,
        seed=FLAGS.seed,
        num_threads=FLAGS.num_threads,
    )
  except InputError as e:
    sys.exit(f"train_sentencepiece: error: {e}")


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
