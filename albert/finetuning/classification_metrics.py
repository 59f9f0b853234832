"""Classification and regression metrics in numpy: accuracy, F1, macro-F1,
Matthews correlation, Pearson, Spearman (GLUE, own data, RACE).

The values match scikit-learn and SciPy (the GLUE evaluation uses them),
including scikit-learn's 0.0 for an undefined F1 or MCC; neither library is a
dependency.
"""

from typing import Callable, Dict, Sequence, Tuple

import numpy as np


def _pair(predictions, labels, dtype) -> Tuple[np.ndarray, np.ndarray]:
  """Both arguments as 1-D arrays of `dtype` and one length."""
  predictions = np.asarray(predictions, dtype=dtype).reshape(-1)
  labels = np.asarray(labels, dtype=dtype).reshape(-1)
  if predictions.shape != labels.shape or not labels.size:
    raise ValueError(
        f"predictions ({predictions.size} values) and labels "
        f"({labels.size} values) must be equally long and "
        "non-empty"
    )
  return predictions, labels


def accuracy(predictions, labels) -> float:
  """The fraction of `predictions` equal to `labels` ([N] class indices)."""
  predictions, labels = _pair(predictions, labels, np.int64)
  return float(np.mean(predictions == labels))


def f1(predictions, labels) -> float:
  """Binary F1 of class 1: 2 TP / (2 TP + FP + FN); 0.0 if TP + FP + FN = 0.

  Args:
    predictions: [N] class indices, 0 or 1.
    labels: [N] class indices, 0 or 1.
  """
  predictions, labels = _pair(predictions, labels, np.int64)
  tp = np.sum((predictions == 1) & (labels == 1))
  fp = np.sum((predictions == 1) & (labels != 1))
  fn = np.sum((predictions != 1) & (labels == 1))
  denominator = 2 * tp + fp + fn
  return float(2 * tp / denominator) if denominator else 0.0


def macro_f1(predictions, labels) -> float:
  """The unweighted mean over classes of each class's one-vs-rest F1.

  As scikit-learn's `f1_score(average="macro")`: the classes are those that
  occur in `labels` or `predictions`, and a class's F1 is 0.0 when it has no
  true positives, false positives or false negatives.

  Args:
    predictions: [N] class indices.
    labels: [N] class indices.
  """
  predictions, labels = _pair(predictions, labels, np.int64)
  scores = []
  for c in np.union1d(predictions, labels):
    tp = np.sum((predictions == c) & (labels == c))
    wrong = np.sum((predictions == c) != (labels == c))  # FP + FN
    scores.append(2 * tp / (2 * tp + wrong) if tp + wrong else 0.0)
  return float(np.mean(scores))


def per_class(
    predictions, labels, names: Sequence[str], prefix: str = ""
) -> Dict[str, float]:
  """Each class's precision, recall and F1 (`<prefix>precision/<name>`,
  ...; 0.0
  where undefined, as scikit-learn's `precision_recall_fscore_support`
  with zero_division=0) and the confusion matrix
  (`<prefix>confusion/<gold>/<predicted>`: how many examples of class gold got
  class predicted, scikit-learn's `confusion_matrix`).

  Args:
    predictions: [N] class indices in [0, len(names)).
    labels: [N] class indices in [0, len(names)).
    names: the class names, by index.
  """
  predictions, labels = _pair(predictions, labels, np.int64)
  k = len(names)
  confusion = np.zeros([k, k], np.int64)
  np.add.at(confusion, (labels, predictions), 1)
  tp = np.diag(confusion).astype(np.float64)
  predicted = confusion.sum(axis=0)
  gold = confusion.sum(axis=1)
  precision = np.where(predicted > 0, tp / np.maximum(predicted, 1), 0.0)
  recall = np.where(gold > 0, tp / np.maximum(gold, 1), 0.0)
  wrong = predicted + gold - 2 * tp  # FP + FN
  f1_scores = np.where(
      tp + wrong > 0, 2 * tp / np.maximum(2 * tp + wrong, 1), 0.0
  )
  out = {}
  for i, name in enumerate(names):
    out[f"{prefix}precision/{name}"] = float(precision[i])
    out[f"{prefix}recall/{name}"] = float(recall[i])
    out[f"{prefix}f1/{name}"] = float(f1_scores[i])
  for i, gold_name in enumerate(names):
    for j, predicted_name in enumerate(names):
      out[f"{prefix}confusion/{gold_name}/{predicted_name}"] = float(
          confusion[i, j]
      )
  return out


def matthews_corrcoef(predictions, labels) -> float:
  """Matthews correlation coefficient, binary or multi-class.

  The K-class generalisation (Gorodkin, 2004) over the confusion matrix C:
  (c s - t.p) / sqrt((s^2 - p.p) (s^2 - t.t)), with c = trace(C), s = N,
  t and p the true and predicted class counts. For two classes this is
  (TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)). 0.0 when the
  denominator is 0 (one class only in labels or in predictions).

  Args:
    predictions: [N] non-negative class indices.
    labels: [N] non-negative class indices.
  """
  predictions, labels = _pair(predictions, labels, np.int64)
  if min(predictions.min(), labels.min()) < 0:
    raise ValueError("matthews_corrcoef needs class indices >= 0")
  num_classes = int(max(predictions.max(), labels.max())) + 1
  t = np.bincount(labels, minlength=num_classes).astype(np.float64)
  p = np.bincount(predictions, minlength=num_classes).astype(np.float64)
  c = float(np.sum(predictions == labels))
  s = float(labels.size)
  denominator = np.sqrt((s * s - p @ p) * (s * s - t @ t))
  return float((c * s - t @ p) / denominator) if denominator else 0.0


def pearson(predictions, labels) -> float:
  """Pearson correlation of two [N] float arrays; 0.0 if one is constant.

  (SciPy returns nan for a constant input; 0.0 keeps "higher is better"
  comparisons, e.g. for choosing a checkpoint, well defined.)
  """
  x, y = _pair(predictions, labels, np.float64)
  x = x - x.mean()
  y = y - y.mean()
  denominator = np.sqrt((x @ x) * (y @ y))
  return float(x @ y / denominator) if denominator else 0.0


def _ranks(values: np.ndarray) -> np.ndarray:
  """1-based ranks of [N] values; tied values share their average rank."""
  order = np.argsort(values, kind="stable")
  ordered = values[order]
  is_start = np.r_[True, ordered[1:] != ordered[:-1]]
  starts = np.flatnonzero(is_start)
  ends = np.r_[starts[1:], values.size]  # Runs of ties: [start, end).
  run_of = np.cumsum(is_start) - 1  # [N] sorted position -> its run.
  ranks = np.empty(values.size)
  ranks[order] = ((starts + ends - 1) / 2 + 1)[run_of]
  return ranks


def spearman(predictions, labels) -> float:
  """Spearman rank correlation: Pearson of the (tie-averaged) ranks."""
  x, y = _pair(predictions, labels, np.float64)
  return pearson(_ranks(x), _ranks(y))


def _accuracy_and_f1(predictions, labels) -> float:
  return (accuracy(predictions, labels) + f1(predictions, labels)) / 2


def _corr(predictions, labels) -> float:
  return (pearson(predictions, labels) + spearman(predictions, labels)) / 2


# By the names GLUE's task specs and own-data tasks use.
METRICS: Dict[str, Callable[..., float]] = {
    "accuracy": accuracy,
    "f1": f1,
    "accuracy_and_f1": _accuracy_and_f1,
    "mcc": matthews_corrcoef,
    "pearson": pearson,
    "spearman": spearman,
    "corr": _corr,
}
