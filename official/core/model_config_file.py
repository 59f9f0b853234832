"""MODEL_DIR/model_config.json: which model a model directory holds.

The one owner of the file. The trainer refuses a directory that holds
another model, and writes the file into a new one once the run has passed
its checks; model loading reads it back;
fine-tuning compares it with the model it builds. All of them go through the
functions here, so the file is written and compared one way.
"""

import json
import os
from typing import Any, Dict, List, Optional

import tensorflow as tf

from official.io import atomic_write
from official.io import files

FILE_NAME = "model_config.json"


def path(model_dir: str) -> str:
  return os.path.join(model_dir, FILE_NAME)


def dumps(fields: Dict[str, Any]) -> str:
  """The file's text: `fields` as sorted, indented JSON."""
  return json.dumps(fields, indent=2, sort_keys=True)


def write(model_dir: str, fields: Dict[str, Any]) -> None:
  """Writes `fields` as sorted, indented JSON, atomically."""
  atomic_write.write_atomic(path(model_dir), dumps(fields))


def read(model_dir: str) -> Optional[Dict[str, Any]]:
  """The JSON object in the file, or None when the file does not exist.

  Raises:
    ValueError: the file is unreadable or does not hold a JSON object.
  """
  file_path = path(model_dir)
  if not files.exists(file_path):
    return None
  try:
    fields = json.loads(files.read_text(file_path))
  except (OSError, tf.errors.OpError, json.JSONDecodeError) as e:
    raise ValueError(f"cannot read {file_path}: {e}") from e
  if not isinstance(fields, dict):
    raise ValueError(f"{file_path} must hold a JSON object of config fields")
  return fields


def differences(saved: Dict[str, Any], wanted: Dict[str, Any]) -> List[str]:
  """Sorted names of the fields whose values differ (or exist on one side)."""
  return sorted(
      k for k in set(saved) | set(wanted) if saved.get(k) != wanted.get(k)
  )


def describe(
    saved: Dict[str, Any], wanted: Dict[str, Any], changed: List[str]
) -> str:
  """`field: saved -> wanted, ...` for the fields in `changed`."""
  return ", ".join(
      f"{k}: {saved.get(k)!r} -> {wanted.get(k)!r}" for k in changed
  )


def check(model_dir: str, wanted: Dict[str, Any]) -> bool:
  """Refuses a directory of another model; changes nothing on disk.

  Returns:
    Whether the file must still be written (the directory has none).

  Raises:
    ValueError: the directory's file differs from `wanted` (one line naming
      each differing field).
  """
  saved = read(model_dir) if files.isdir(model_dir) else None
  if saved is None:
    return True
  changed = differences(saved, wanted)
  if changed:
    raise ValueError(
        f"model_dir {model_dir} holds a different model "
        f"({describe(saved, wanted, changed)}); use a new "
        "--model_dir or the same config"
    )
  return False
