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


# What `multilabel_metrics` computes and `tune_thresholds` can maximise.
METRIC_NAMES = ("micro_f1", "macro_f1", "subset_accuracy")


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


def per_label(predicted, gold, names: Sequence[str]) -> Dict[str, float]:
  """Each label's precision, recall and F1 (`precision/<name>`, ...; 0.0
  where undefined, as scikit-learn's `precision_recall_fscore_support`
  with zero_division=0)."""
  predicted, gold = _matrices(predicted, gold)
  tp = np.sum(predicted & gold, axis=0).astype(np.float64)
  n_predicted = np.sum(predicted, axis=0)
  n_gold = np.sum(gold, axis=0)
  precision = np.where(n_predicted > 0, tp / np.maximum(n_predicted, 1), 0.0)
  recall = np.where(n_gold > 0, tp / np.maximum(n_gold, 1), 0.0)
  f1 = label_f1(predicted, gold)
  out = {}
  for i, name in enumerate(names):
    out[f"precision/{name}"] = float(precision[i])
    out[f"recall/{name}"] = float(recall[i])
    out[f"f1/{name}"] = float(f1[i])
  return out


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


def _f1_scores(tp, fp, fn, metric: str) -> np.ndarray:
  """The `metric` ("micro_f1" or "macro_f1") for label counts of shape
  [..., L] (summed or averaged over the last axis)."""
  if metric == "micro_f1":
    return _f1(tp.sum(-1), fp.sum(-1), fn.sum(-1))
  return np.mean(_f1(tp, fp, fn), axis=-1)


def tune_thresholds(
    probabilities,
    gold,
    metric: str = "micro_f1",
    grid: Sequence[float] = THRESHOLD_GRID,
    max_rounds: int = 20,
) -> np.ndarray:
  """[L] per-label thresholds of `grid` that raise `metric` (micro_f1,
  macro_f1 or subset_accuracy of `multilabel_metrics`) on (`probabilities`
  [N, L], `gold` [N, L]); a label is predicted when its probability is >=
  its threshold.

  Coordinate ascent from 0.5 for every label: label by label, the grid
  value that gives the highest metric with the other thresholds held is
  taken when it is strictly better than the current one (among equals, the
  one nearest 0.5, then the lower), until a round changes nothing. Every
  step raises the metric, so the result is never below the metric at 0.5;
  a label the data cannot tune keeps 0.5. For macro_f1 (a mean of each
  label's own F1) this is each label's best F1 threshold.
  """
  if metric not in METRIC_NAMES:
    raise ValueError(f"metric={metric!r} is not one of {METRIC_NAMES}")
  probabilities = np.asarray(probabilities, np.float64)
  _, gold = _matrices(probabilities > 0, gold)
  # Nearest 0.5 first: argmax keeps the first of equal scores.
  order = np.asarray(sorted(grid, key=lambda t: (abs(t - 0.5), t)))
  if 0.5 not in order:
    raise ValueError(f"grid {tuple(grid)} must hold 0.5, the start")
  start = int(np.flatnonzero(order == 0.5)[0])
  chosen = np.full(gold.shape[1], start)  # [L] indices into `order`

  def wrong(label):  # [T, N]: the label wrong at each grid value
    column = probabilities[:, label]
    return (column[np.newaxis] >= order[:, np.newaxis]) != gold[:, label]

  if metric == "subset_accuracy":
    errors = np.sum((probabilities >= 0.5) != gold, axis=1)  # [N]

    def scores(label):  # [T] the metric with `label` at each grid value
      at = wrong(label)
      others = errors - at[chosen[label]]
      return np.mean(others + at == 0, axis=-1), at

    def take(label, index, at):
      nonlocal errors
      errors = errors - at[chosen[label]] + at[index]

  else:
    tp, fp, fn = [], [], []  # per grid value: [L] each
    for t in order:
      predicted = probabilities >= t
      tp.append(np.sum(predicted & gold, axis=0))
      fp.append(np.sum(predicted & ~gold, axis=0))
      fn.append(np.sum(~predicted & gold, axis=0))
    counts = [np.stack(c) for c in (tp, fp, fn)]  # [T, L] each
    columns = np.arange(gold.shape[1])

    def scores(label):
      grids = []
      for c in counts:
        held = np.broadcast_to(c[chosen, columns], c.shape).copy()
        held[:, label] = c[:, label]
        grids.append(held)  # [T, L]
      return _f1_scores(*grids, metric), None

    def take(label, index, at):
      del label, index, at  # the counts are read through `chosen`

  for _ in range(max_rounds):
    changed = False
    for label in range(gold.shape[1]):
      candidates, at = scores(label)
      best = int(np.argmax(candidates))
      if candidates[best] > candidates[chosen[label]] + 1e-12:
        take(label, best, at)
        chosen[label] = best
        changed = True
    if not changed:
      break
  return order[chosen]
