"""MODEL_DIR/labels.json: the label set of a task whose labels come from data.

Own-data tasks (text and token classification, text regression) learn their
labels from the training file. The trainer writes this file with the first
checkpoint (`FinetuneTask.model_dir_files`); eval, predict and export read
it back, so they need no training file, and a resumed run can refuse
different labels.
"""

import json
import os
from typing import Any, Dict, Optional, Tuple

from official.errors import InputError
from official.io import files

LABELS_FILE = "labels.json"


def contents(task: str, **fields: Any) -> Dict[str, str]:
  """{"labels.json": its text}, for `model_dir_files`."""
  return {LABELS_FILE: json.dumps({"task": task, **fields}, indent=2) + "\n"}


def read(model_dir: str, task: str) -> Optional[Tuple[str, Dict[str, Any]]]:
  """(path, fields) of MODEL_DIR/labels.json; None when the file is absent.

  Raises InputError when it is not JSON or another task wrote it.
  """
  path = os.path.join(model_dir, LABELS_FILE)
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
