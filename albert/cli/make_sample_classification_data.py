r"""Writes a sample text-classification set in CSV (no download).

Sentences of the installed Python standard library's documentation,
labelled with their package (asyncio, email, logging, unittest), split
80 / 10 / 10 into train.csv, dev.csv and test.csv with the columns `id`,
`text` and `label` that gin/finetune/text_classification.gin reads:

  python tools/make_sample_classification_data.py --out_dir=mydata

--multi_label writes texts of one or two sentences with a `labels` column
naming their packages ("asyncio|logging"), for
gin/finetune/text_multilabel.gin.

--minority=logging writes skewed labels: `logging` for that package's
sentences, drawn to be --minority_share (5%) of each split, and `other` for
the rest; the case for TextClassificationTask.class_weights='balanced'.

--long_documents writes documents of 24 sentences (about four times
seq_length 128): 21 from the docstrings of importlib, json, urllib and xml,
then three of one of the four packages, which is the label. Truncation
cannot see the label; windows can (TextClassificationTask.long_text).

--pairs=anchor_positive writes sentence pairs (`id,anchor,positive`: a
docstring sentence and the next one) and --pairs=scored scored pairs
(`id,text,text_pair,score`: 1 for the next sentence, 0.5 for a sentence of
the same package, 0 for another package's), for
gin/finetune/sentence_embedding.gin.
"""

from absl import flags
from absl import logging

from albert import cli
from albert.finetuning.own_data import sample_data
from official.errors import InputError

OUT_DIR = flags.DEFINE_string("out_dir", "mydata", "Where the CSV files go.")
MULTI_LABEL = flags.DEFINE_bool(
    "multi_label",
    False,
    "Texts of one or two sentences, labelled with every package they come "
    "from (a `labels` column, '|'-joined).",
)
MINORITY = flags.DEFINE_enum(
    "minority",
    None,
    sample_data.PACKAGES,
    "Two skewed labels: this package's sentences (--minority_share of each "
    "split) and `other`.",
)
MINORITY_SHARE = flags.DEFINE_float(
    "minority_share", 0.05, "The minority label's share of each split."
)
LONG_DOCUMENTS = flags.DEFINE_bool(
    "long_documents",
    False,
    "Documents several times longer than seq_length 128, labelled by the "
    "package of their last sentences.",
)

PAIRS = flags.DEFINE_enum(
    "pairs",
    None,
    sample_data.PAIR_FORMS,
    "Sentence pairs for training an embedder instead of labelled texts.",
)


def main(argv):
  cli.unexpected_arguments(argv)
  if PAIRS.value:
    counts = sample_data.write_sample_pairs(OUT_DIR.value, PAIRS.value)
  else:
    if sum((MULTI_LABEL.value, bool(MINORITY.value), LONG_DOCUMENTS.value)) > 1:
      raise InputError(
          "--multi_label, --minority and --long_documents: choose one"
      )
    try:
      counts = sample_data.write_sample_classification_data(
          OUT_DIR.value,
          multi_label=MULTI_LABEL.value,
          minority=MINORITY.value,
          minority_share=MINORITY_SHARE.value,
          long_documents=LONG_DOCUMENTS.value,
      )
    except ValueError as e:
      raise InputError(str(e)) from e
  logging.info(
      "Wrote %s: %s",
      OUT_DIR.value,
      ", ".join(f"{split}.csv {n} rows" for split, n in counts.items()),
  )


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
