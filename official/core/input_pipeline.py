"""The resumable tail every training input pipeline shares, and the
static-shape evaluation batches.

A training stream is deterministic (seeded shuffles, ordered parallel maps),
so a resumed run reproduces it and skips the raw records it has already
consumed: skipping before parsing is cheap. Pipelines shard themselves (one
per `tf.distribute.InputContext`), so auto-sharding is off.

Evaluation batches have the training batches' static shape too (as a TPU,
or XLA, needs): the last one is padded with zeros, and every batch carries
`is_real_example` (float32 [B], 0 on padding: the original's name for it),
which the task's metrics take as weights. Each pipeline gives a whole
number of batches per replica it feeds, so no replica waits for data.
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

  def parse_batch(batch):
    parsed = parse(batch)
    if not training:
      return parsed
    # Whole batches: a static batch size, whatever `parse` could infer.
    return {
        k: tf.ensure_shape(v, [batch_size] + v.shape[1:].as_list())
        for k, v in parsed.items()
    }

  dataset = dataset.map(
      parse_batch, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True
  )
  options = tf.data.Options()
  options.deterministic = True
  options.experimental_distribute.auto_shard_policy = (
      tf.data.experimental.AutoShardPolicy.OFF
  )
  return dataset.with_options(options).prefetch(tf.data.AUTOTUNE)


IS_REAL_EXAMPLE = "is_real_example"


def padded_eval_batches(
    dataset: tf.data.Dataset, batch_size: int, group: int = 1
) -> tf.data.Dataset:
  """Eval batches of at most `batch_size` -> batches of exactly
  `batch_size` with `IS_REAL_EXAMPLE`, their count a multiple of `group`
  (whole batches of padding added at the end)."""

  def pad(batch):
    first = next(iter(batch.values()))
    real = tf.shape(first)[0]
    padded = {
        k: tf.ensure_shape(
            tf.pad(v, [[0, batch_size - real]] + [[0, 0]] * (v.shape.rank - 1)),
            [batch_size] + v.shape[1:].as_list(),
        )
        for k, v in batch.items()
    }
    padded[IS_REAL_EXAMPLE] = tf.ensure_shape(
        tf.pad(tf.ones([real], tf.float32), [[0, batch_size - real]]),
        [batch_size],
    )
    return padded

  dataset = dataset.map(pad)
  if group > 1:

    def fill(batches):  # [k <= group, B, ...] -> [group, B, ...]
      missing = group - tf.shape(batches[IS_REAL_EXAMPLE])[0]
      return {
          k: tf.ensure_shape(
              tf.pad(v, [[0, missing]] + [[0, 0]] * (v.shape.rank - 1)),
              [group] + v.shape[1:].as_list(),
          )
          for k, v in batches.items()
      }

    dataset = dataset.batch(group).map(fill).unbatch()
  return dataset


def distributed_dataset(
    strategy, task, *, batch_size: int, training: bool, start_step: int = 0
):
  """`task.build_inputs` per input pipeline of `strategy`: batches of
  `batch_size` per replica, the training stream after `start_step` steps
  (each replica's share of them skipped); for evaluation, padded to static
  shapes (`padded_eval_batches`)."""

  def dataset_fn(context):
    local_replicas = context.num_replicas_in_sync // context.num_input_pipelines
    skip = start_step * batch_size * local_replicas if training else 0
    dataset = task.build_inputs(
        context, training=training, batch_size=batch_size, skip_examples=skip
    )
    if training:
      return dataset
    return padded_eval_batches(dataset, batch_size, local_replicas)

  options = tf.distribute.InputOptions(experimental_fetch_to_device=True)
  return strategy.distribute_datasets_from_function(dataset_fn, options)
