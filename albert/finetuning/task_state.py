"""What a fine-tuning model directory knows about its task besides the
weights, and `TaskState`, the one record that hands it to the task
(`FinetuneTask.use_state`).

  MODEL_DIR/labels.json        the facts of a task that learns them from
                               data (own data: the label set, whether inputs
                               are pairs; `FinetuneTask.saved_facts`), written
                               with the first checkpoint
  MODEL_DIR/embedding.json     an embedder's pooling, normalisation, length
                               and lower-casing (`model_dir.read_embedding`)
  MODEL_DIR/eval_results.json  the dev evaluation's metrics and what it chose
                               (SQuAD v2's null threshold, multi-label
                               thresholds)

Eval, predict, export and the converters read them back, so they need no
training file and serve what the dev evaluation chose, and a resumed run can
refuse different labels.
"""

import dataclasses
import json
import os
from typing import Any, Dict, Optional, Tuple

from albert import model_dir as model_dir_lib
from official.errors import InputError
from official.io import atomic_write
from official.io import files

LABELS_FILE = "labels.json"
EVAL_RESULTS_FILE = "eval_results.json"


@dataclasses.dataclass(frozen=True)
class TaskState:
  """One reading of a model directory, for `FinetuneTask.use_state`.

  Attributes:
    model_dir: the directory (a conversion's: the one it will write).
    dev_choices: MODEL_DIR/eval_results.json, for prediction, export and
      conversion (None otherwise, or when the run wrote none).
    for_model: a model is about to be built without training: what its
      shape depends on must be known, else one line.
  """

  model_dir: str
  dev_choices: Optional[Dict[str, float]] = None
  for_model: bool = False

  @classmethod
  def of(
      cls, model_dir: str, *, dev_choices: bool = False, for_model: bool = False
  ) -> "TaskState":
    """The state of `model_dir`; with `dev_choices`, its eval results."""
    chosen = read_eval_results(model_dir) if dev_choices else None
    return cls(model_dir, chosen, for_model)

  @property
  def facts_path(self) -> str:
    return os.path.join(self.model_dir, LABELS_FILE)

  def read_facts(self, task: str) -> Optional[Tuple[str, Dict[str, Any]]]:
    """(path, fields) of MODEL_DIR/labels.json; None when it is absent.

    Raises InputError when it is not JSON or another task wrote it.
    """
    path = self.facts_path
    if not files.exists(path):
      return None
    try:
      fields = json.loads(files.read_text(path))
    except json.JSONDecodeError as e:
      raise InputError(
          f"{path}: not JSON ({e.msg}); it is written by training, restore "
          "it or retrain"
      ) from None
    if not isinstance(fields, dict) or fields.get("task") != task:
      written_by = fields.get("task") if isinstance(fields, dict) else None
      raise InputError(
          f"{path}: written by the {written_by} task, not {task}; use that "
          "task's gin file or another --model_dir"
      )
    return path, fields


def files_of(task) -> Dict[str, str]:
  """{"labels.json": its text} of a task that keeps facts, and
  {"embedding.json": ...} of an embedder (`model_dir.read_embedding` reads
  it): what the trainer and the converters write beside the checkpoint."""
  written = {}
  facts = task.saved_facts()
  if facts is not None:
    text = json.dumps({"task": task.name, **facts}, indent=2) + "\n"
    written[LABELS_FILE] = text
  settings = task.embedding_settings()
  if settings is not None:
    text = json.dumps(settings, indent=2, sort_keys=True) + "\n"
    written[model_dir_lib.EMBEDDING_FILE] = text
  return written


def write_eval_results(model_dir: str, results: Dict[str, float]) -> str:
  path = os.path.join(model_dir, EVAL_RESULTS_FILE)
  atomic_write.write_atomic(path, json.dumps(results, indent=2, sort_keys=True))
  return path


def read_eval_results(model_dir: str) -> Optional[Dict[str, float]]:
  """MODEL_DIR/eval_results.json, None when the run wrote none."""
  path = os.path.join(model_dir, EVAL_RESULTS_FILE)
  if not files.exists(path):
    return None
  return json.loads(files.read_text(path))
