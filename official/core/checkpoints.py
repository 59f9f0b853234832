"""Checkpoint housekeeping of a model directory: finding, reading back,
saving and cleaning up `ckpt-N` checkpoints.

What the trainer does around its loop, and the one reading of a checkpoint
path for every reader (a prefix, its `.index` file, or a directory, meaning
its latest checkpoint):

  resolve(path)                  the prefix a user's path names
  step_of(prefix)                N of `ckpt-N`
  newest_first(model_dir)        every checkpoint, newest first, even with a
                                 damaged state file
  restore(checkpoint, model, p)  model and optimizer, or weights only
  restore_newest(model_dir, fn)  the newest checkpoint that reads back whole
  save(manager, write_dir, step) a save that leaves nothing behind on failure
  StateFirstCheckpointManager    old checkpoints unlisted before deletion
  remove_leftovers(model_dir)    what a killed save left
"""

import os
import re
from typing import Any, Callable, Dict, List, Optional

from absl import logging
import tensorflow as tf

from official.core import checkpoint_damage
from official.errors import DamagedFileError
from official.errors import first_line
from official.io import atomic_write
from official.io import files

STATE_FILE = "checkpoint"
_STEP = re.compile(r"-(\d+)$")


class StateFirstCheckpointManager(tf.train.CheckpointManager):
  """A `tf.train.CheckpointManager` whose state file stops naming an old
  checkpoint before that checkpoint's files are deleted.

  TensorFlow's manager deletes the oldest checkpoint's files first and
  rewrites the `checkpoint` state file after, so a kill in between leaves the
  file naming a checkpoint that is gone. Here the state is written first:
  whatever the file lists exists whole. (`keep_checkpoint_every_n_hours` is
  not supported.)
  """

  def _sweep(self):
    doomed = []
    while self._max_to_keep and len(self._maybe_delete) > self._max_to_keep:
      doomed.append(self._maybe_delete.popitem(last=False)[0])
    if not doomed:
      return
    self._record_state()
    for prefix in doomed:
      for path in files.glob(files.escape(prefix) + ".index") + files.glob(
          files.escape(prefix) + ".data-?????-of-?????"
      ):
        files.remove(path)


def resolve(path: str) -> str:
  """The checkpoint prefix `path` names: a prefix, its `.index` file, or a
  directory (its latest checkpoint, from the state file).

  Raises:
    ValueError: a directory without checkpoints, or no checkpoint at `path`.
  """
  if files.isdir(path):
    latest = tf.train.latest_checkpoint(path)
    if not latest:
      raise ValueError(
          f"no checkpoint in {path} (no '{STATE_FILE}' state file naming a "
          "ckpt-N)"
      )
    return latest
  if path.endswith(".index"):
    path = path[: -len(".index")]
  if not files.exists(path + ".index"):
    raise ValueError(
        f"checkpoint {path} not found ({path}.index does not exist)"
    )
  return path


def reader(prefix: str):
  """The reader of checkpoint `prefix` (a prefix, never a directory:
  `tf.train.load_checkpoint` takes a prefix that a file system matching
  names by prefix, `ram://` for one, calls a directory for that)."""
  return tf.compat.v1.train.NewCheckpointReader(prefix)


def step_of(prefix: str) -> int:
  """N of a `ckpt-N` (or `model.ckpt-N`) prefix; 0 for another name."""
  match = _STEP.search(prefix)
  return int(match.group(1)) if match else 0


def newest_first(model_dir: str) -> List[str]:
  """The checkpoints the state file lists, newest first (a damaged state
  file: the ckpt-N files in the directory, by N)."""
  state_file = os.path.join(model_dir, STATE_FILE)
  if not files.exists(state_file):
    return []
  # None for a state file that does not parse (TensorFlow logs why).
  state = tf.train.get_checkpoint_state(model_dir)
  if state is None:
    logging.warning(
        "%s is unreadable: looking for ckpt-N files instead", state_file
    )
  else:
    paths = list(state.all_model_checkpoint_paths)
    if state.model_checkpoint_path not in paths:
      paths.append(state.model_checkpoint_path)
    paths = [
        p if os.path.isabs(p) or "://" in p else os.path.join(model_dir, p)
        for p in paths
    ]
    return paths[::-1]
  found = []
  for index in files.glob(os.path.join(files.escape(model_dir), "*.index")):
    prefix = index[: -len(".index")]
    if _STEP.search(prefix):
      found.append((step_of(prefix), prefix))
  return [prefix for _, prefix in sorted(found, reverse=True)]


def restore(
    checkpoint: tf.train.Checkpoint,
    model,
    path: str,
    optional: Optional[Dict[str, Any]] = None,
) -> None:
  """Restores `checkpoint` (model and optimizer), or the model alone from a
  weights-only checkpoint (e.g. a converted one): training then starts at
  step 0. `optional` names more objects of `checkpoint` that checkpoints
  written before them lack: restored where the checkpoint has them, else
  left as they are.

  Raises:
    DamagedFileError: a file of the checkpoint is truncated or corrupt.
    ValueError: the checkpoint is another model's (or optimizer's).
  """
  try:
    names = reader(path).get_variable_to_shape_map()
    has_optimizer = any(name.startswith("optimizer/") for name in names)
    target = checkpoint if has_optimizer else tf.train.Checkpoint(model=model)
    missing = [
        key
        for key in optional or {}
        if not any(name.startswith(key + "/") for name in names)
    ]
    if has_optimizer and missing:
      kept = {k: v for k, v in optional.items() if k not in missing}
      target = tf.train.Checkpoint(
          model=model, optimizer=checkpoint.optimizer, **kept
      )
    target.read(path).assert_existing_objects_matched()
  except (AssertionError, ValueError, IndexError, tf.errors.OpError) as e:
    checkpoint_damage.raise_if_damaged(path, e)
    raise ValueError(
        f"checkpoint {path} does not match this model and "
        f"optimizer: {first_line(e)}"
    ) from e
  if not has_optimizer:
    logging.info("%s holds weights only: fresh optimizer state, step 0.", path)


def restore_newest(
    model_dir: str, restore_fn: Callable[[str], None]
) -> Optional[str]:
  """`restore_fn` on the newest checkpoint of model_dir that reads back whole.

  A damaged checkpoint (truncated or corrupt file) is skipped with a
  warning naming it, and the one before it is tried.

  Returns:
    The checkpoint restored, or None when model_dir has none.

  Raises:
    DamagedFileError: every checkpoint is damaged.
    ValueError: a checkpoint of another model.
  """
  skipped = []
  for path in newest_first(model_dir):
    try:
      restore_fn(path)
    except DamagedFileError as e:
      logging.warning("%s: skipped, trying the checkpoint before it", e)
      skipped.append(os.path.basename(path))
      continue
    if skipped:
      logging.warning(
          "Resuming from %s: the newer %s %s damaged",
          path,
          ", ".join(skipped),
          "is" if len(skipped) == 1 else "are",
      )
    return path
  if skipped:
    raise DamagedFileError(
        f"every checkpoint in {model_dir} is damaged "
        f"({', '.join(skipped)}): restore them from a backup, or remove "
        "them to start afresh"
    )
  return None


def save(
    manager: tf.train.CheckpointManager, write_dir: str, step: int
) -> None:
  """Saves ckpt-`step`; a failed save (a full disk) leaves no part of the
  checkpoint behind."""
  try:
    manager.save(checkpoint_number=step)
  except BaseException:
    prefix = os.path.join(write_dir, f"ckpt-{step}")
    pattern = files.escape(prefix)
    for leftover in (
        files.glob(pattern + ".*")
        + files.glob(pattern + "_temp*")
        + files.glob(
            os.path.join(files.escape(write_dir), f"{STATE_FILE}.tmp*")
        )
    ):
      files.remove_any(leftover)
    raise


def remove_leftovers(model_dir: str) -> None:
  """What a run killed during a save left: TensorFlow's staging directory
  of the checkpoint and temporary state file (never listed, never read),
  and the temporaries of the config files (`atomic_write`)."""
  atomic_write.remove_stale_temporaries_in(model_dir)
  for pattern in ("ckpt-*_temp*", f"{STATE_FILE}.tmp*"):
    for leftover in files.glob(os.path.join(files.escape(model_dir), pattern)):
      logging.info("Removing %s, left by an interrupted save", leftover)
      files.remove_any(leftover)
