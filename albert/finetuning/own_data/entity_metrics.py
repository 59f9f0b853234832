"""Entity-level precision, recall and F1 of tag sequences, as `seqeval` scores.

`seqeval` (the CoNLL `conlleval` script's Python successor, used by Hugging
Face's token-classification examples) in its default mode reads entities out
of IOB1, IOB2/BIO, IOE and IOBES tags leniently: an `I-X` after `O` or after
another type starts an entity, and the entity ends at `O`, at a `B-`/`S-`,
after an `E-`/`S-` or where the type changes. An entity counts as correct
when its type, first and last word all match. These functions re-implement
that reading and the micro-averaged scores; `seqeval` itself is only a test
dependency (tests check equality on random tag sequences).
"""

from typing import Dict, List, Sequence, Set, Tuple

Entity = Tuple[int, str, int, int]  # (sentence, type, first word, last word)


def _split(tag: str) -> Tuple[str, str]:
  """("B", "PER") for "B-PER"; ("O", "_") for "O"; a bare "B" has type "_"."""
  prefix = tag[:1]
  kind = tag[1:].split("-", maxsplit=1)[-1] or "_"
  return prefix, kind


def _ends(prev_tag: str, tag: str, prev_kind: str, kind: str) -> bool:
  """Whether the entity open at the previous word ends before this one."""
  if prev_tag in ("E", "S"):
    return True
  if prev_tag in ("B", "I") and tag in ("B", "S", "O"):
    return True
  return prev_tag not in ("O", ".") and prev_kind != kind


def _starts(prev_tag: str, tag: str, prev_kind: str, kind: str) -> bool:
  """Whether an entity starts at this word."""
  if tag in ("B", "S"):
    return True
  if tag in ("E", "I") and prev_tag in ("E", "S", "O"):
    return True
  return tag not in ("O", ".") and prev_kind != kind


def sentence_entities(tags: Sequence[str]) -> List[Tuple[str, int, int]]:
  """(type, first, last) word spans of the entities in one sentence's tags."""
  spans = []
  prev_tag, prev_kind, begin = "O", "", 0
  for i, tag in enumerate(list(tags) + ["O"]):
    prefix, kind = _split(tag)
    if _ends(prev_tag, prefix, prev_kind, kind):
      spans.append((prev_kind, begin, i - 1))
    if _starts(prev_tag, prefix, prev_kind, kind):
      begin = i
    prev_tag, prev_kind = prefix, kind
  return spans


def entities(sentences: Sequence[Sequence[str]]) -> Set[Entity]:
  """Every entity of every sentence, keyed by the sentence's index."""
  return {
      (s, kind, first, last)
      for s, tags in enumerate(sentences)
      for kind, first, last in sentence_entities(tags)
  }


def _prf(correct: int, predicted: int, true: int) -> Dict[str, float]:
  precision = correct / predicted if predicted else 0.0
  recall = correct / true if true else 0.0
  total = precision + recall
  return {
      "precision": precision,
      "recall": recall,
      "f1": 2 * precision * recall / total if total else 0.0,
  }


def entity_scores(
    true: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]
) -> Dict[str, float]:
  """Micro-averaged entity precision, recall and F1 (seqeval's defaults),
  plus each entity type's as `{type}/precision` etc. and `{type}/support`.

  Args:
    true: the gold tags, one list per sentence.
    predicted: the predicted tags, sentence for sentence the same lengths.
  """
  if len(true) != len(predicted) or any(
      len(t) != len(p) for t, p in zip(true, predicted)
  ):
    raise ValueError(
        "true and predicted tags must have the same sentences and lengths"
    )
  gold = entities(true)
  guess = entities(predicted)
  scores = _prf(len(gold & guess), len(guess), len(gold))
  for kind in sorted({e[1] for e in gold | guess}):
    g = {e for e in gold if e[1] == kind}
    p = {e for e in guess if e[1] == kind}
    for name, value in _prf(len(g & p), len(p), len(g)).items():
      scores[f"{kind}/{name}"] = value
    scores[f"{kind}/support"] = float(len(g))
  return scores
