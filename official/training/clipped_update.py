"""The optimizer update of a training step: all-reduce, clip, apply."""

from typing import Sequence

import tensorflow as tf


def clipped_update(
    optimizer,
    grads: Sequence[tf.Tensor],
    variables: Sequence[tf.Variable],
    clip_norm: float,
) -> tf.Tensor:
  """Sums gradients over replicas, clips them to a global norm, applies them.

  Clipping belongs to the training step, not to the optimizer, so that it sees
  the gradient of the whole global batch: the per-replica gradients are summed
  first (each replica is expected to have scaled its loss by 1 / global batch
  or by 1 / num_replicas), then clipped by their global norm, then applied with
  the optimizer's own aggregation turned off. Works in a replica context of any
  strategy, including the default one.

  Args:
    optimizer: a `tf_keras.optimizers.Optimizer` (or a LossScaleOptimizer
      around one; pass gradients that are already unscaled).
    grads: gradients, aligned with `variables` (None entries are dropped).
    variables: the trainable variables.
    clip_norm: maximum global norm; <= 0 disables clipping.

  Returns:
    The global norm of the summed gradients before clipping (a float32 scalar).
  """
  pairs = [(g, v) for g, v in zip(grads, variables) if g is not None]
  grads = [tf.convert_to_tensor(g) for g, _ in pairs]  # IndexedSlices -> dense
  variables = [v for _, v in pairs]
  context = tf.distribute.get_replica_context()
  if context is not None and context.num_replicas_in_sync > 1:
    grads = context.all_reduce(tf.distribute.ReduceOp.SUM, grads)
  global_norm = tf.linalg.global_norm(grads)
  if clip_norm > 0:
    grads, _ = tf.clip_by_global_norm(grads, clip_norm, use_norm=global_norm)
  optimizer.apply_gradients(
      zip(grads, variables), skip_gradients_aggregation=True
  )
  return global_norm
