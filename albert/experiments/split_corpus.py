"""The ablations' held-out text: documents split into training and held out."""

import os
from typing import Dict, List

from official.errors import InputError


def split_corpus(
    corpus: str, train_path: str, heldout_path: str, heldout_every: int
) -> Dict[str, int]:
  """Every heldout_every-th document (blank-line separated) is held out."""
  counts = {"train": 0, "heldout": 0}
  tmp_train, tmp_heldout = train_path + ".tmp", heldout_path + ".tmp"
  with (
      open(corpus, encoding="utf-8") as f,
      open(tmp_train, "w", encoding="utf-8") as train,
      open(tmp_heldout, "w", encoding="utf-8") as heldout,
  ):
    document: List[str] = []
    index = 0

    def flush():
      nonlocal index
      if not document:
        return
      held = index % heldout_every == heldout_every - 1
      out = heldout if held else train
      out.write("".join(document) + "\n")
      counts["heldout" if held else "train"] += 1
      document.clear()
      index += 1

    for line in f:
      if line.strip():
        document.append(line if line.endswith("\n") else line + "\n")
      else:
        flush()
    flush()
  if counts["heldout"] < 2 or counts["train"] < 2:
    os.remove(tmp_train)
    os.remove(tmp_heldout)
    raise InputError(
        f"corpus {corpus} has {sum(counts.values())} documents; the ablation "
        f"needs at least {2 * heldout_every} (blank lines between documents)"
    )
  os.replace(tmp_train, train_path)
  os.replace(tmp_heldout, heldout_path)
  return counts
