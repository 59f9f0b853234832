"""`GlueTask`: GLUE sentence(-pair) classification and STS-B regression.

The original `run_classifier.py` features, head and serving
(`SentenceClassificationTask`, docs/reference.md section 6). Which files,
labels, metrics and submission names a task has is read from
`glue/data.py`; the diagnostic set AX is predicted with the MNLI
model, alongside MNLI's test sets.
"""

from typing import List, Optional

import gin
import numpy as np

from albert.finetuning.glue import data as glue_data
from albert.finetuning.glue import metrics as glue_metrics
from albert.finetuning.glue import submission as glue_submission
from albert.finetuning.sentence_classification import SentenceClassificationTask
from official.io import files

AX = "ax"
# What picks the best checkpoint: the original's key (run_classifier.py
# `main`: `matthew_corr` for CoLA, `pearson` for STS-B, `eval_accuracy` for
# every other task); GlueTask.main_metric chooses another of the task's
# metrics, e.g. GLUE's combined scores `accuracy_and_f1` or `corr`.
MAIN_METRICS = {"cola": "mcc", "stsb": "pearson"}


@gin.configurable
class GlueTask(SentenceClassificationTask):
  """One GLUE task.

  Args:
    task_name: `cola`, `sst2`, `mrpc`, `stsb`, `qqp`, `mnli`, `qnli`, `rte`
      or `wnli` (AX is predicted by `mnli`).
    main_metric: the metric that selects the best checkpoint and seed; None:
      the original's (`MAIN_METRICS`, else `accuracy`).
    **kwargs: `FinetuneTask` arguments.
  """

  def __init__(
      self,
      *,
      task_name: str = gin.REQUIRED,
      main_metric: Optional[str] = None,
      **kwargs,
  ):
    super().__init__(**kwargs)
    spec = glue_data.get_glue_task(task_name)
    if spec.model_task != task_name:
      raise ValueError(
          f"GlueTask.task_name={task_name!r}: {spec.name} is "
          f"predicted by the {spec.model_task} model (its test "
          f"set is written by task_name='{spec.model_task}')"
      )
    self.spec = spec
    self.name = task_name
    self.main_metric = main_metric or MAIN_METRICS.get(task_name, "accuracy")
    if self.main_metric not in spec.metric_names:
      raise ValueError(
          f"GlueTask.main_metric={main_metric!r} is not one of {task_name}'s "
          f"metrics ({', '.join(spec.metric_names)})"
      )
    self.is_regression = spec.is_regression
    self.labels = spec.labels
    self.pair = spec.labeled_columns.text_b is not None
    self.eval_splits = spec.eval_splits
    self.predict_splits = spec.predict_splits

  def _predict_ax(self) -> bool:
    """MNLI also writes AX.tsv when the diagnostic file is present."""
    return (
        self.name == "mnli"
        and bool(self.data_dir)
        and files.exists(glue_data.glue_file(AX, self.data_dir, "test"))
    )

  def predict_to_files(self, model, output_dir: str, runner=None) -> List[str]:
    paths = super().predict_to_files(model, output_dir, runner)
    if self._predict_ax():
      paths += self.write_predictions(
          AX, *self.predict(model, AX, runner), output_dir
      )
    return paths

  def read_examples(self, split):
    data_dir = self._require_data_dir()
    if split == AX:
      return glue_data.read_glue(AX, data_dir, "test")
    return glue_data.read_glue(self.name, data_dir, split)

  def evaluate_outputs(self, split, examples, features, outputs):
    labels = np.array([f["label"] for f in features])
    return glue_metrics.glue_metrics(
        self.name, self._predictions(outputs), labels
    )

  def write_predictions(self, split, examples, features, outputs, output_dir):
    task, file_split = (AX, "test") if split == AX else (self.name, split)
    return [
        glue_submission.write_submission(
            task,
            file_split,
            [e.guid for e in examples],
            self._predictions(outputs),
            output_dir,
        )
    ]
