"""A sample text-classification set from the installed standard library.

Which package a sentence of documentation comes from: the sentences of the
docstrings of `asyncio`, `email`, `logging` and `unittest` (read as
`albert/pretraining_data/sample_corpus.py` reads them, never imported),
labelled with their package. Real English, the same for a given Python
version, no download: the data of the README's own-data example.
"""

import csv
import hashlib
import io
import os
from typing import Dict, List, Sequence, Tuple

from albert.pretraining_data import sample_corpus
from official.io import atomic_write

PACKAGES = ("asyncio", "email", "logging", "unittest")
SPLITS = ("train", "dev", "test")


def labelled_sentences(
    packages: Sequence[str] = PACKAGES, root: str = None
) -> List[Tuple[str, str]]:
  """(sentence, package) of every docstring sentence of the packages."""
  root = root or sample_corpus.stdlib_dir()
  return [
      (sentence, package)
      for package in packages
      for document in sample_corpus.iter_documents(os.path.join(root, package))
      for sentence in document
  ]


def _split_of(sentence: str) -> str:
  """1 in 10 sentences go to dev, 1 in 10 to test, by a hash of the text
  (so a sentence repeated in several docstrings stays in one split)."""
  bucket = int(hashlib.sha256(sentence.encode()).hexdigest(), 16) % 10
  return "dev" if bucket == 0 else "test" if bucket == 1 else "train"


def write_sample_classification_data(out_dir: str) -> Dict[str, int]:
  """Writes OUT_DIR/{train,dev,test}.csv (`id`, `text`, `label`); returns
  the rows of each split. Each file is written whole or not at all."""
  os.makedirs(out_dir, exist_ok=True)
  by_split = {split: [] for split in SPLITS}
  seen = set()
  for sentence, package in labelled_sentences():
    if sentence not in seen:
      seen.add(sentence)
      by_split[_split_of(sentence)].append((sentence, package))
  contents = {}
  for split, rows in by_split.items():
    text = io.StringIO(newline="")
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["id", "text", "label"])
    writer.writerows(
        (f"{split}-{i}", sentence, package)
        for i, (sentence, package) in enumerate(rows)
    )
    contents[os.path.join(out_dir, f"{split}.csv")] = text.getvalue()
  atomic_write.write_atomic_files(contents)
  return {split: len(rows) for split, rows in by_split.items()}
