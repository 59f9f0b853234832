"""`Replicated`: a model's outputs over in-memory arrays, on every replica.

Evaluation and prediction run as training does, through `strategy.run`:
every replica gets a batch of the same static shape, so the step is traced
(and, with XLA or on a TPU, compiled) once. A global batch is
`per_replica x replicas` rows; the last one is padded with zeros, and the
padding is dropped from the outputs, so no metric or prediction sees it.
`strategy.gather` brings the replicas' outputs back in example order.

    runner = Replicated(strategy, jit_compile=True)
    outputs = runner.predict(model, lambda b: model(b, training=False),
                             {"input_word_ids": ids, ...}, batch_size=32)
"""

import math
import weakref
from typing import Callable, Dict, Optional

from absl import logging
import numpy as np
import tensorflow as tf

from official.core.progress import Progress
from official.distribute import strategy as strategy_lib

Arrays = Dict[str, np.ndarray]


class Replicated:
  """Runs prediction steps on every replica of `strategy`.

  Args:
    strategy: the strategy whose scope the models were built in (None: the
      default strategy, one device).
    jit_compile: compile each replica's step with XLA.
  """

  def __init__(
      self,
      strategy: Optional[tf.distribute.Strategy] = None,
      jit_compile: bool = False,
  ):
    self.strategy = strategy or tf.distribute.get_strategy()
    self.jit_compile = jit_compile
    self._steps = weakref.WeakKeyDictionary()  # owner -> traced step

  @property
  def replicas(self) -> int:
    return self.strategy.num_replicas_in_sync

  def per_replica_batch(self, batch_size: int) -> int:
    """Rows per replica of a global batch of (at least) `batch_size`."""
    return math.ceil(batch_size / self.replicas)

  def _step(self, owner, fn: Callable) -> Callable:
    """`fn` on every replica, the outputs gathered; traced once per
    `owner` (e.g. the model `fn` calls)."""
    if owner not in self._steps:
      strategy = self.strategy
      replica_fn = tf.function(
          fn, jit_compile=self.jit_compile, autograph=False
      )

      @tf.function(autograph=False)
      def step(batch):
        outputs = strategy_lib.run(strategy, replica_fn, (batch,))
        return tf.nest.map_structure(
            lambda v: strategy.gather(v, axis=0), outputs
        )

      self._steps[owner] = step
    return self._steps[owner]

  def predict(
      self,
      owner,
      fn: Callable[[Dict[str, tf.Tensor]], Dict[str, tf.Tensor]],
      arrays: Arrays,
      batch_size: int,
      what: str = "features",
  ) -> Arrays:
    """`fn(batch)` (a dict of [B, ...] outputs) over every row of `arrays`.

    Args:
      owner: what `fn`'s trace is kept for (the model it calls).
      fn: one replica's step, e.g. `lambda b: model(b, training=False)`.
      arrays: name -> [N, ...] inputs.
      batch_size: rows per global batch (rounded up to a multiple of the
        replicas).
      what: the rows' name in the progress line.

    Returns:
      name -> [N, ...] outputs, in the order of `arrays`.
    """
    step = self._step(owner, fn)
    count = len(next(iter(arrays.values())))
    per_replica = self.per_replica_batch(batch_size)
    global_batch = per_replica * self.replicas
    chunks = []
    progress = Progress(count)
    for start in range(0, count, global_batch):
      batch = {
          k: _pad_rows(v[start : start + global_batch], global_batch)
          for k, v in arrays.items()
      }
      values = self.strategy.experimental_distribute_values_from_function(
          lambda context, batch=batch: {
              k: v[
                  context.replica_id_in_sync_group
                  * per_replica : (context.replica_id_in_sync_group + 1)
                  * per_replica
              ]
              for k, v in batch.items()
          }
      )
      outputs = step(values)
      real = min(global_batch, count - start)
      chunks.append({k: v.numpy()[:real] for k, v in outputs.items()})
      progress.update(start + real)
    logging.info(
        "predicted %s on %d replica(s)", progress.describe(what), self.replicas
    )
    return {k: np.concatenate([c[k] for c in chunks]) for k in chunks[0]}


def _pad_rows(array: np.ndarray, rows: int) -> np.ndarray:
  """`array` [n, ...] with zero rows appended up to [rows, ...]."""
  missing = rows - len(array)
  if not missing:
    return array
  padding = np.zeros((missing,) + array.shape[1:], array.dtype)
  return np.concatenate([array, padding])
