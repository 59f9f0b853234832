"""`Summaries`: a run's TensorBoard scalars, held back until it may write."""

import os
from typing import Dict, List, Optional, Tuple

import tensorflow as tf

from official.io import files


class Summaries:
  """Scalars under MODEL_DIR/<name> (one TensorBoard run per name).

  While `hold()` is in effect (a run before its first checkpoint, which must
  leave a refused model directory untouched) values are kept in memory;
  `release()` writes them and every later value directly.

  Args:
    model_dir: where the runs' event files go.
    enabled: False on the workers other than the chief: nothing is written.
  """

  def __init__(self, model_dir: str, enabled: bool = True):
    self.model_dir = model_dir
    self.enabled = enabled
    self._writers = {}
    self._held: Optional[List[Tuple[str, int, Dict[str, float]]]] = None

  def hold(self) -> None:
    self._held = []

  def release(self) -> None:
    held, self._held = self._held or [], None
    for name, step, values in held:
      self.write(name, step, values)

  def write(self, name: str, step: int, values: Dict[str, float]) -> None:
    if not self.enabled:
      return
    if self._held is not None:
      self._held.append((name, step, values))
      return
    if name not in self._writers:
      logdir = os.path.join(self.model_dir, name)
      files.makedirs(logdir)
      self._writers[name] = tf.summary.create_file_writer(logdir)
    with self._writers[name].as_default(step=step):
      for key, value in values.items():
        tf.summary.scalar(key, value)
    self._writers[name].flush()
