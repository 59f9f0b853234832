r"""Trains an ALBERT WordPiece vocabulary: a BERT-style vocab.txt.

For models that tokenize with WordPiece, as the Chinese ALBERTs do:

  python tools/train_wordpiece.py --input='corpus/*.txt' \
      --vocab_file=vocab.txt --vocab_size=21128

The words are the original tokenizer's basic tokens (each Chinese character
alone, punctuation split off, lower-cased and accents stripped unless
--nodo_lower_case), counted over the whole input; tensorflow-text's
WordPiece learner picks the pieces. [PAD], [UNK], [CLS], [SEP], [MASK] come
first (ids 0 to 4). Then:

  python tools/create_pretraining_data.py --vocab_file=vocab.txt ...
"""

from absl import flags
from absl import logging

from albert import cli
from albert.pretraining_data import wordpiece_trainer

INPUT = flags.DEFINE_string(
    "input", None, "Text files: comma-separated files/globs."
)
VOCAB_FILE = flags.DEFINE_string("vocab_file", None, "The vocab.txt to write.")
VOCAB_SIZE = flags.DEFINE_integer(
    "vocab_size", 21128, "At most this many entries (the Chinese ALBERTs')."
)
DO_LOWER_CASE = flags.DEFINE_bool(
    "do_lower_case", True, "Lower-case, as create_pretraining_data does."
)
MIN_COUNT = flags.DEFINE_integer(
    "min_count", 2, "Pieces seen fewer times are not learnt (characters are)."
)


def main(argv):
  cli.unexpected_arguments(argv)
  cli.require_flags("input", "vocab_file")
  logging.set_verbosity(logging.INFO)
  vocab = wordpiece_trainer.train_wordpiece(
      input_file=INPUT.value,
      vocab_file=VOCAB_FILE.value,
      vocab_size=VOCAB_SIZE.value,
      lower=DO_LOWER_CASE.value,
      min_count=MIN_COUNT.value,
  )
  print(f"{VOCAB_FILE.value}: {len(vocab)} entries")


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
