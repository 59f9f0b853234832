"""The metrics GLUE reports for each task, by its spec's `metric_names`."""

from typing import Dict

from albert.finetuning import classification_metrics
from albert.finetuning.glue.data import get_glue_task


def glue_metrics(task: str, predictions, labels) -> Dict[str, float]:
  """The metrics GLUE reports for `task` (its spec's `metric_names`).

  Args:
    task: a key of `GLUE_TASKS` or the GLUE name.
    predictions: [N] class indices into the task's labels, or [N] float
      scores for STS-B.
    labels: [N], as `predictions`.

  Returns:
    metric name -> value: accuracy (classification); mcc (CoLA, AX); f1 and
    accuracy_and_f1 (MRPC, QQP); pearson, spearman and their mean corr
    (STS-B).
  """
  spec = get_glue_task(task)
  return {
      name: classification_metrics.METRICS[name](predictions, labels)
      for name in spec.metric_names
  }
