r"""Embeds a file of texts: one vector per text.

  albert-embed --model=runs/embedder --input=texts.txt --output=vectors.npy
  albert-embed --model=export/serving --input=docs.csv --column=body \
      --output=docs.jsonl
  albert-embed --model=albert_base_v2 --input=texts.txt --output=vectors.npy

--model: a model directory (its embedding.json: pooling, normalisation,
maximum length, as a sentence-transformers import or a sentence_embedding
fine-tuning records them; default mean pooling; a fine-tuned one's dev-best
checkpoint), an exported SavedModel (its `embed` signature), or a released
model's name (albert-fetch --list). --input: one text per line,
or a column of a .csv / .tsv (header row) or .jsonl file. --output: .npy
([N, H] float32, in the input's order) or .jsonl ({"text", "embedding"}),
written under a temporary name and renamed when complete. Texts are
batched in order of length, each batch padded to its longest text; a text
longer than the maximum is cut, an empty one gets the vector of its special
tokens.
"""

from absl import flags
from absl import logging

from albert import cli
from albert.finetuning import embedders
from albert.registry import fetch as registry
from albert.serving import embedding

MODEL = flags.DEFINE_string(
    "model", None, "Model directory, exported SavedModel, or model name."
)
INPUT = flags.DEFINE_string(
    "input", None, "The texts: .txt, .csv, .tsv, .jsonl."
)
OUTPUT = flags.DEFINE_string("output", None, "The vectors: .npy or .jsonl.")
COLUMN = flags.DEFINE_string(
    "column", "text", "The texts' column (CSV, TSV) or field (JSON Lines)."
)
BATCH_SIZE = flags.DEFINE_integer("batch_size", 32, "Texts per batch.")


def main(argv):
  cli.unexpected_arguments(argv)
  cli.require_flags("model", "input", "output")
  logging.set_verbosity(logging.INFO)
  embedder = embedders.open_embedder(registry.resolve(MODEL.value))
  count = embedding.embed_file(
      embedder,
      INPUT.value,
      OUTPUT.value,
      column=COLUMN.value,
      batch_size=BATCH_SIZE.value,
  )
  print(f"embedded {count} texts into {OUTPUT.value}")


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
