"""RACE accuracy, overall and per level (RACE-M and RACE-H in the paper)."""

from typing import Dict, Sequence

import numpy as np

from albert.finetuning.classification_metrics import accuracy


def race_metrics(
    predictions, labels, groups: Sequence[str]
) -> Dict[str, float]:
  """Accuracy over all questions and within each group.

  Args:
    predictions: [N] predicted option indices.
    labels: [N] correct option indices.
    groups: [N] each question's group (`MultipleChoiceExample.group`:
      "middle" or "high").

  Returns:
    {"accuracy": over all N, "accuracy_{group}": within each group present},
    e.g. accuracy, accuracy_high, accuracy_middle.
  """
  predictions = np.asarray(predictions).reshape(-1)
  labels = np.asarray(labels).reshape(-1)
  groups = np.asarray(groups).reshape(-1)
  if groups.shape != labels.shape:
    raise ValueError(
        f"groups ({groups.size} values) and labels "
        f"({labels.size} values) must be equally long"
    )
  metrics = {"accuracy": accuracy(predictions, labels)}
  for group in sorted(set(groups.tolist())):
    mask = groups == group
    metrics[f"accuracy_{group}"] = accuracy(predictions[mask], labels[mask])
  return metrics
