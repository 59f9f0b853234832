"""A request mix shared by the serving benchmark's workers: texts and their
token counts in a JSON file, taken in turn.

Every worker of a run reads the same file and gets the same requests, so
each serves the same texts in the same order.
"""

import json
from typing import List, Sequence


def write(path: str, texts: Sequence[str], lengths: Sequence[int]) -> str:
  """Writes the mix: `texts` and each one's packed length in tokens."""
  with open(path, "w", encoding="utf-8") as f:
    json.dump({"texts": list(texts), "lengths": [int(n) for n in lengths]}, f)
  return path


class Mix:
  """The mix of `write`'s file, read in turn (wrapping around)."""

  def __init__(self, path: str):
    with open(path, encoding="utf-8") as f:
      data = json.load(f)
    self._texts: List[str] = data["texts"]
    self._lengths: List[int] = data["lengths"]
    self._next = 0

  def _take(self, values, count):
    n = len(values)
    out = [values[(self._next + i) % n] for i in range(count)]
    self._next = (self._next + count) % n
    return out

  def __len__(self) -> int:
    return len(self._texts)

  def texts(self, count: int) -> List[str]:
    """The next `count` texts."""
    return self._take(self._texts, count)

  def lengths(self, count: int) -> List[int]:
    """The next `count` texts' packed lengths (for token-id contestants)."""
    return self._take(self._lengths, count)
