"""CoNLL-2003-style files -> `TaggedSentence`s.

One word per line with its tag in the last column (CoNLL-2003's
`word POS chunk NER` lines, or just `word tag`), columns separated by
whitespace, a blank line between sentences; `-DOCSTART-` lines are skipped.
A test file may hold the words only (one column). Files are
`DATA_DIR/{train,dev,test}.txt` (or `.conll`).
"""

import dataclasses
from typing import List, Optional, Tuple

from albert.finetuning.own_data import reader as own_data
from official.errors import InputError
from official.io import files

EXTENSIONS = (".txt", ".conll")


@dataclasses.dataclass(frozen=True)
class TaggedSentence:
  """One sentence: its words and their tags (None when the file has none)."""

  guid: str
  words: Tuple[str, ...]
  tags: Optional[Tuple[str, ...]]


def require_split_file(data_dir: str, split: str, *, task: str, hint: str):
  """DATA_DIR/split.txt or split.conll, or a one-line InputError."""
  return own_data.require_split_file(
      data_dir, split, task=task, hint=hint, extensions=EXTENSIONS
  )


def find_split_file(data_dir: str, split: str) -> Optional[str]:
  """DATA_DIR/split.txt or split.conll; None if neither exists."""
  return own_data.find_split_file(data_dir, split, EXTENSIONS)


def read_conll(path: str, *, tagged: Optional[bool]) -> List[TaggedSentence]:
  """The sentences of one file.

  Args:
    path: the file.
    tagged: True if every line must carry a tag, False if none may (the
      only column is the word), None to accept either for the whole file.
  """
  sentences = []
  words, tags, first_line = [], [], None
  columns_seen = None  # 1 (words only) or 2+ (word ... tag)

  def close():
    if words:
      sentences.append(
          TaggedSentence(
              guid=str(len(sentences)),
              words=tuple(words),
              tags=tuple(tags) if columns_seen != 1 else None,
          )
      )
    words.clear()
    tags.clear()

  with files.open_text(path) as f:
    for number, line in enumerate(f, 1):
      fields = line.split()
      if not fields:
        close()
        continue
      if fields[0] == "-DOCSTART-":
        close()
        continue
      has_tag = len(fields) > 1
      if columns_seen is None:
        columns_seen, first_line = (2 if has_tag else 1), number
        if tagged and not has_tag:
          raise InputError(
              f"{path} line {number}: {line.strip()!r} has no tag; write "
              "the word and its tag (e.g. 'Paris B-LOC') on every line"
          )
        if tagged is False and has_tag:
          raise InputError(
              f"{path} line {number}: more than one column; prediction "
              "files hold one word per line"
          )
      elif (columns_seen == 2) != has_tag:
        raise InputError(
            f"{path} line {number}: {len(fields)} column(s), but line "
            f"{first_line} has {'a tag' if columns_seen == 2 else 'none'}; "
            "tag every word or none"
        )
      words.append(fields[0])
      if has_tag:
        tags.append(fields[-1])
  close()
  if not sentences:
    raise InputError(
        f"{path}: no sentences; write one word and its tag per line, a "
        "blank line between sentences"
    )
  return sentences
