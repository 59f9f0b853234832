r"""Writes a sample corpus from the installed Python standard library's docs.

Real English in the BERT input format (one sentence per line, a blank line
between documents), the same for a given Python version, no download:

  python tools/make_sample_corpus.py --output=sample_corpus.txt
"""

import os

from absl import flags
from absl import logging

from albert import cli
from albert.pretraining_data import sample_corpus
from official.errors import InputError

OUTPUT = flags.DEFINE_string(
    "output", "sample_corpus.txt", "Corpus file to write."
)
MAX_MB = flags.DEFINE_float(
    "max_mb", None, "Stop before this many MB (whole documents only)."
)


def main(argv):
  cli.unexpected_arguments(argv)
  if MAX_MB.value is not None and MAX_MB.value <= 0:
    raise InputError(f"max_mb={MAX_MB.value} must be > 0")
  directory = os.path.dirname(os.path.abspath(OUTPUT.value))
  if not os.path.isdir(directory):
    raise InputError(
        f"directory {directory} does not exist: create it or choose another "
        "--output"
    )
  max_bytes = None if MAX_MB.value is None else int(MAX_MB.value * 1e6)
  size = sample_corpus.write_sample_corpus(OUTPUT.value, max_bytes)
  logging.info(
      "Wrote %s: %.2f MB from the docs of %s",
      OUTPUT.value,
      size / 1e6,
      sample_corpus.stdlib_dir(),
  )


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
