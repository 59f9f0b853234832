"""Multi-label classification metrics in numpy, and per-label thresholds.

Each example has any number of labels: `gold` and `predicted` are [N, L]
boolean matrices (row n, column l: example n has label l). The F1 values
match scikit-learn's `f1_score(average="micro" / "macro", zero_division=0)`
and subset accuracy its `accuracy_score` on indicator matrices; scikit-learn
is not a dependency.
"""

from typing import Dict, Sequence

import numpy as np

# The thresholds `tune_thresholds` tries: 0.05, 0.10, ..., 0.95.
THRESHOLD_GRID = tuple(round(0.05 * k, 2) for k in range(1, 20))


def _matrices(predicted, gold):
  predicted = np.asarray(predicted, bool)
  gold = np.asarray(gold, bool)
  if predicted.shape != gold.shape or predicted.ndim != 2 or not gold.size:
    raise ValueError(
        f"predicted {predicted.shape} and gold {gold.shape} must be equal, "
        "non-empty [examples, labels] matrices"
    )
  return predicted, gold


def _f1(tp, fp, fn):
  """2 TP / (2 TP + FP + FN), elementwise; 0 where the denominator is 0."""
  tp, fp, fn = (np.asarray(x, np.float64) for x in (tp, fp, fn))
  denominator = 2 * tp + fp + fn
  return np.where(denominator > 0, 2 * tp / np.maximum(denominator, 1), 0.0)


def label_f1(predicted, gold) -> np.ndarray:
  """[L] each label's F1 over the examples (0 for a label neither predicted
  nor present)."""
  predicted, gold = _matrices(predicted, gold)
  tp = np.sum(predicted & gold, axis=0)
  fp = np.sum(predicted & ~gold, axis=0)
  fn = np.sum(~predicted & gold, axis=0)
  return _f1(tp, fp, fn)


def multilabel_metrics(predicted, gold) -> Dict[str, float]:
  """`micro_f1` (true and false positives and negatives pooled over every
  label), `macro_f1` (the unweighted mean of each label's F1) and
  `subset_accuracy` (the fraction of examples whose label set is exactly
  right; an example without labels is right when none is predicted)."""
  predicted, gold = _matrices(predicted, gold)
  micro = _f1(
      np.sum(predicted & gold),
      np.sum(predicted & ~gold),
      np.sum(~predicted & gold),
  )
  return {
      "micro_f1": float(micro),
      "macro_f1": float(np.mean(label_f1(predicted, gold))),
      "subset_accuracy": float(np.mean(np.all(predicted == gold, axis=1))),
  }


def tune_thresholds(
    probabilities, gold, grid: Sequence[float] = THRESHOLD_GRID
) -> np.ndarray:
  """[L] for each label the threshold of `grid` that maximises its F1 on
  (`probabilities` [N, L], `gold` [N, L]); a label is predicted when its
  probability is >= its threshold. Among equally good thresholds the one
  nearest 0.5 is taken (then the lower), so a label the data cannot tune
  (never present, never predicted) keeps 0.5."""
  probabilities = np.asarray(probabilities, np.float64)
  _, gold = _matrices(probabilities > 0, gold)
  # Nearest 0.5 first: argmax keeps the first of equal scores.
  order = sorted(grid, key=lambda t: (abs(t - 0.5), t))
  scores = np.stack(
      [label_f1(probabilities >= t, gold) for t in order]
  )  # [T, L]
  return np.asarray(order)[np.argmax(scores, axis=0)]
