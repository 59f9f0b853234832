"""A sample text-classification set from the installed standard library.

Which package a sentence of documentation comes from: the sentences of the
docstrings of `asyncio`, `email`, `logging` and `unittest` (read as
`albert/pretraining_data/sample_corpus.py` reads them, never imported),
labelled with their package. Real English, the same for a given Python
version, no download: the data of the README's own-data example.

The same docstrings give sentence pairs for training an embedder
(`write_sample_pairs`): a sentence and the one after it in its docstring.
"""

import csv
import hashlib
import io
import os
import random
from typing import Dict, List, Sequence, Tuple

from albert.pretraining_data import sample_corpus
from official.io import atomic_write

PACKAGES = ("asyncio", "email", "logging", "unittest")
SPLITS = ("train", "dev", "test")


def labelled_sentences(
    packages: Sequence[str] = PACKAGES, root: str = None
) -> List[Tuple[str, str]]:
  """(sentence, package) of every docstring sentence of the packages."""
  return [
      (sentence, package)
      for package, document in sample_corpus.package_documents(packages, root)
      for sentence in document
  ]


def _split_of(sentence: str) -> str:
  """1 in 10 sentences go to dev, 1 in 10 to test, by a hash of the text
  (so a sentence repeated in several docstrings stays in one split)."""
  bucket = int(hashlib.sha256(sentence.encode()).hexdigest(), 16) % 10
  return "dev" if bucket == 0 else "test" if bucket == 1 else "train"


def _by_split() -> Dict[str, List[Tuple[str, str]]]:
  by_split = {split: [] for split in SPLITS}
  seen = set()
  for sentence, package in labelled_sentences():
    if sentence not in seen:
      seen.add(sentence)
      by_split[_split_of(sentence)].append((sentence, package))
  return by_split


def _multi_label(rows, seed: int) -> List[Tuple[str, str]]:
  """Texts of one or two sentences (half of them two, drawn in a seeded
  random order, often of two packages), labelled with the set of their
  packages, sorted and joined by '|'."""
  rows = list(rows)
  rng = random.Random(seed)
  rng.shuffle(rows)
  texts = []
  while rows:
    take = 2 if len(rows) > 1 and rng.random() < 0.5 else 1
    chosen, rows = rows[:take], rows[take:]
    texts.append(
        (
            " ".join(sentence for sentence, _ in chosen),
            "|".join(sorted({package for _, package in chosen})),
        )
    )
  return texts


def _skewed(rows, minority: str, share: float, seed: int):
  """Two labels: `minority` (its sentences drawn so that they are `share`
  of the rows) and "other" (every other package's sentences)."""
  rows = list(rows)
  others = [(text, "other") for text, package in rows if package != minority]
  theirs = [(text, package) for text, package in rows if package == minority]
  wanted = max(1, round(share * len(others) / (1 - share)))
  if wanted > len(theirs):
    raise ValueError(
        f"{minority} has {len(theirs)} sentences, fewer than the {wanted} "
        f"that a share of {share} needs; choose a smaller share"
    )
  rng = random.Random(seed)
  chosen = rng.sample(theirs, wanted)
  mixed = others + chosen
  rng.shuffle(mixed)
  return mixed


# Documents per split of `long_documents`, their sentences, how many of the
# last ones decide the label, and the packages the others come from (never
# a label, so the start of a document says nothing of it).
LONG_DOCUMENTS = {"train": 1200, "dev": 300, "test": 300}
DOCUMENT_SENTENCES = 24
DECIDING_SENTENCES = 3
PREAMBLE_PACKAGES = ("importlib", "json", "urllib", "xml")


def _long_documents(rows, count: int, seed: int) -> List[Tuple[str, str]]:
  """`count` documents: DOCUMENT_SENTENCES - DECIDING_SENTENCES sentences of
  PREAMBLE_PACKAGES' docstrings, then DECIDING_SENTENCES of one label
  package's sentences of the split (its label), drawn with replacement."""
  rng = random.Random(seed)
  preamble = sorted({s for s, _ in labelled_sentences(PREAMBLE_PACKAGES)})
  by_package = {}
  for sentence, package in rows:
    by_package.setdefault(package, []).append(sentence)
  documents = []
  for _ in range(count):
    label = rng.choice(sorted(by_package))
    start = rng.choices(preamble, k=DOCUMENT_SENTENCES - DECIDING_SENTENCES)
    end = rng.choices(by_package[label], k=DECIDING_SENTENCES)
    documents.append((" ".join(start + end), label))
  return documents


def write_sample_classification_data(
    out_dir: str,
    multi_label: bool = False,
    minority: str = None,
    minority_share: float = 0.05,
    long_documents: bool = False,
) -> Dict[str, int]:
  """Writes OUT_DIR/{train,dev,test}.csv (`id`, `text`, `label`); with
  `multi_label`, texts of one or two sentences and a `labels` column of
  their packages ('|'-joined); with `minority` (a package), two labels,
  the package's sentences `minority_share` of each split and "other" the
  rest (skewed labels, for class weights); with `long_documents`,
  `LONG_DOCUMENTS` documents per split, each DOCUMENT_SENTENCES sentences
  long and labelled by the package of its last DECIDING_SENTENCES (texts
  longer than the model, decided late: `long_text='windows'`). Returns the
  rows of each split. The files are written together or not at all."""
  if sum((multi_label, minority is not None, long_documents)) > 1:
    raise ValueError(
        "multi_label, minority and long_documents: choose one at most"
    )
  if minority is not None and minority not in PACKAGES:
    raise ValueError(f"minority={minority!r} is not one of {PACKAGES}")
  if not 0.0 < minority_share < 0.5:
    raise ValueError(f"minority_share={minority_share} must be in (0, 0.5)")

  def rows_of(split_rows, number):
    if multi_label:
      return _multi_label(split_rows, seed=number)
    if minority:
      return _skewed(split_rows, minority, minority_share, seed=number)
    if long_documents:
      return _long_documents(
          split_rows, LONG_DOCUMENTS[SPLITS[number]], seed=number
      )
    return split_rows

  by_split = {
      split: rows_of(rows, number)
      for number, (split, rows) in enumerate(_by_split().items())
  }
  header = ["id", "text", "labels" if multi_label else "label"]
  return _write_splits(out_dir, header, by_split)


def _write_splits(out_dir, header, by_split) -> Dict[str, int]:
  """OUT_DIR/SPLIT.csv of `header` and each split's rows, each row led by
  its id `SPLIT-i`, written together or not at all; the rows per split."""
  os.makedirs(out_dir, exist_ok=True)
  contents = {}
  for split, rows in by_split.items():
    text = io.StringIO(newline="")
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    writer.writerows((f"{split}-{i}", *row) for i, row in enumerate(rows))
    contents[os.path.join(out_dir, f"{split}.csv")] = text.getvalue()
  atomic_write.write_atomic_files(contents)
  return {split: len(rows) for split, rows in by_split.items()}


PAIR_FORMS = ("anchor_positive", "scored")


def _pair_rows(form: str) -> Dict[str, List[Tuple]]:
  """The rows of each split: a docstring's sentences two by two
  (anchor, positive); `scored` adds, for each, the anchor with a sentence
  of another docstring of its package (0.5) and of another package (0),
  the pair itself scoring 1. A docstring stays in one split."""
  rng = random.Random(0)
  documents = [
      (p, d)
      for p, d in sample_corpus.package_documents(PACKAGES)
      if len(d) >= 2
  ]
  by_package = {}
  for package, sentences in documents:
    by_package.setdefault(package, []).extend(sentences)
  rows = {split: [] for split in SPLITS}
  seen = set()
  for package, sentences in documents:
    if sentences[0] in seen:  # a docstring repeated in several modules
      continue
    seen.add(sentences[0])
    split = _split_of(sentences[0])
    for i in range(0, len(sentences) - 1, 2):
      anchor, positive = sentences[i], sentences[i + 1]
      if form == "anchor_positive":
        rows[split].append((anchor, positive))
        continue
      other = rng.choice([p for p in by_package if p != package])
      rows[split] += [
          (anchor, positive, 1.0),
          (anchor, rng.choice(by_package[package]), 0.5),
          (anchor, rng.choice(by_package[other]), 0.0),
      ]
  return rows


def write_sample_pairs(out_dir: str, form: str) -> Dict[str, int]:
  """Writes OUT_DIR/{train,dev,test}.csv of sentence pairs for
  gin/finetune/sentence_embedding.gin: `id,anchor,positive` rows
  (`form="anchor_positive"`) or `id,text,text_pair,score` rows
  (`form="scored"`). Returns the rows of each split; the files are written
  together or not at all."""
  if form not in PAIR_FORMS:
    raise ValueError(f"form={form!r} is not one of {PAIR_FORMS}")
  header = (
      ["id", "anchor", "positive"]
      if form == "anchor_positive"
      else ["id", "text", "text_pair", "score"]
  )
  return _write_splits(out_dir, header, _pair_rows(form))
