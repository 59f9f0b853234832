"""The examples the fine-tuning data readers produce, before tokenization."""

import dataclasses
from typing import Optional, Tuple, Union


@dataclasses.dataclass(frozen=True)
class TextExample:
  """One sentence or sentence pair of a classification or regression task.

  Attributes:
    guid: a unique id, "{split}-{index}" (the GLUE submission needs the
      index of test examples).
    text_a: the first (or only) sentence.
    text_b: the second sentence of a pair task, else None.
    label: the label string of a classification task, the score of a
      regression task (STS-B), or None for an unlabeled test set.
  """

  guid: str
  text_a: str
  text_b: Optional[str]
  label: Optional[Union[str, float]]


@dataclasses.dataclass(frozen=True)
class MultipleChoiceExample:
  """One question of a multiple-choice task (RACE).

  Attributes:
    guid: a unique id, e.g. "{split}-{level}-{file id}-{question index}".
    context: the passage the question is about.
    question: the question; a "_" in it marks where an option fits.
    options: the candidate answers (4 for RACE).
    label: the index of the right option in `options`, or None if unknown.
    group: the subset the example belongs to ("middle" or "high" for RACE),
      for per-group metrics.
  """

  guid: str
  context: str
  question: str
  options: Tuple[str, ...]
  label: Optional[int]
  group: str
