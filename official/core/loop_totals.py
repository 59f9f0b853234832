"""What a compiled training loop keeps on the devices: `LoopTotals`.

A loop of `steps_per_loop` steps must not read any step's result on the
host, or every step would wait for the one before it to report back. Each
replica adds its loss share to sync-on-read variables on its own device;
the host reads their sums once, when the loop has ended.
"""

import tensorflow as tf

from official.modeling.no_autograph import as_written


class LoopTotals:
  """What a compiled training loop keeps on the devices, per replica: the
  sum of the loss shares of its steps, how many were not finite, and the
  step of the first that was not. The host reads them once, when the loop
  has ended (`read`).

  Args:
    strategy: the variables are made in its scope (sync-on-read: each
      replica adds to its own copy; reading sums them).
  """

  def __init__(self, strategy: tf.distribute.Strategy):
    self._strategy = strategy
    with strategy.scope():
      self.loss = self._variable("loop_loss")
      self.nonfinite = self._variable("loop_nonfinite_steps")
      self.first_nonfinite = self._variable("loop_first_nonfinite_step")

  @staticmethod
  def _variable(name: str) -> tf.Variable:
    return tf.Variable(
        0.0,
        name=name,
        trainable=False,
        synchronization=tf.VariableSynchronization.ON_READ,
        aggregation=tf.VariableAggregation.SUM,
    )

  @as_written
  def reset(self) -> None:
    """In a replica context, before a loop's first step."""
    self.loss.assign(0.0)
    self.nonfinite.assign(0.0)
    self.first_nonfinite.assign(float("inf"))

  def add(self, loss: tf.Tensor, step: tf.Tensor) -> None:
    """In a replica context, after a step: its loss share and its number."""
    loss = tf.cast(loss, tf.float32)
    bad = tf.logical_not(tf.math.is_finite(loss))
    self.loss.assign_add(tf.where(bad, 0.0, loss))
    self.nonfinite.assign_add(tf.cast(bad, tf.float32))
    first = self.first_nonfinite.read_value()
    step = tf.cast(step, tf.float32)
    self.first_nonfinite.assign(tf.where(bad, tf.minimum(first, step), first))

  def read(self):
    """On the host after a loop: (the sum of the loss shares over replicas
    and steps, whether every one was finite, the first non-finite step this
    process saw or None)."""
    loss = float(self.loss.read_value())
    finite = float(self.nonfinite.read_value()) == 0
    first = None
    if not finite:
      local = [
          float(v.numpy())
          for v in self._strategy.experimental_local_results(
              self.first_nonfinite
          )
      ]
      first = int(min(local)) if min(local) != float("inf") else None
    return loss, finite, first


def split_batch(value: tf.Tensor, accumulation: int, size: int):
  """[accumulation x size, ...] -> [accumulation, size, ...] (static where
  the batch's shape is)."""
  rest = value.shape[1:]
  if rest.is_fully_defined():
    return tf.reshape(value, [accumulation, size] + rest.as_list())
  return tf.reshape(
      value, tf.concat([[accumulation, size], tf.shape(value)[1:]], 0)
  )
