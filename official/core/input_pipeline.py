"""The resumable tail every training input pipeline shares.

A training stream is deterministic (seeded shuffles, ordered parallel maps),
so a resumed run reproduces it and skips the raw records it has already
consumed: skipping before parsing is cheap. Pipelines shard themselves (one
per `tf.distribute.InputContext`), so auto-sharding is off.
"""

from typing import Callable, Dict

import tensorflow as tf


def resumable_batches(
    records: tf.data.Dataset,
    *,
    parse: Callable[[tf.Tensor], Dict[str, tf.Tensor]],
    batch_size: int,
    training: bool,
    seed: int = 0,
    skip_examples: int = 0,
    shuffle_buffer_size: int = 10000,
) -> tf.data.Dataset:
  """Parsed batches of serialized `records` (already sharded and, for
  training, repeated).

  Args:
    records: string records of this pipeline, in a deterministic order.
    parse: a batch of records [B] -> dict of tensors.
    batch_size: records per batch; training drops a final partial batch.
    training: shuffle (seeded) before batching; otherwise keep the order.
    seed: the shuffle seed.
    skip_examples: records of this stream already consumed (resume).
    shuffle_buffer_size: records in the shuffle buffer.
  """
  if training:
    records = records.shuffle(
        shuffle_buffer_size, seed=seed, reshuffle_each_iteration=True
    )
  if skip_examples:
    records = records.skip(skip_examples)
  dataset = records.batch(batch_size, drop_remainder=training)
  dataset = dataset.map(
      parse, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True
  )
  options = tf.data.Options()
  options.deterministic = True
  options.experimental_distribute.auto_shard_policy = (
      tf.data.experimental.AutoShardPolicy.OFF
  )
  return dataset.with_options(options).prefetch(tf.data.AUTOTUNE)


def distributed_dataset(
    strategy, task, *, batch_size: int, training: bool, start_step: int = 0
):
  """`task.build_inputs` per input pipeline of `strategy`: batches of
  `batch_size` per replica, the training stream after `start_step` steps
  (each replica's share of them skipped)."""

  def dataset_fn(context):
    local_replicas = context.num_replicas_in_sync // context.num_input_pipelines
    skip = start_step * batch_size * local_replicas if training else 0
    return task.build_inputs(
        context, training=training, batch_size=batch_size, skip_examples=skip
    )

  options = tf.distribute.InputOptions(experimental_fetch_to_device=True)
  return strategy.distribute_datasets_from_function(dataset_fn, options)
