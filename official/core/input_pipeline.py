"""The tail every training input pipeline shares (batches, resume), and
the static-shape evaluation batches.

A training stream is deterministic (seeded shuffles, ordered parallel maps).
A stream built by `seekable_stream` tags its batches with `POSITION`, and a
resumed run starts where the checkpoint's positions say, at a cost that does
not grow with the step; any other stream is reproduced and the examples it
already gave are skipped. Pipelines shard themselves (one per
`tf.distribute.InputContext`), so auto-sharding is off.

Every function these pipelines map is graph code as written: tf.data traces
it without AutoGraph's rewriting (`as_written`; official/modeling/
no_autograph.py says why), whoever builds the pipeline.

Evaluation batches have the training batches' static shape too (as a TPU,
or XLA, needs): the last one is padded with zeros, and every batch carries
`is_real_example` (float32 [B], 0 on padding: the original's name for it),
which the task's metrics take as weights. Each pipeline gives a whole
number of batches per replica it feeds, so no replica waits for data.
"""

from typing import Callable, Dict, Optional

from absl import logging
import numpy as np
import tensorflow as tf

from official.core.seekable_stream import POSITION
from official.core.seekable_stream import POSITION_FIELDS
from official.core.seekable_stream import StreamPosition
from official.modeling.no_autograph import as_written


def resumable_batches(
    elements: tf.data.Dataset,
    *,
    parse: Callable[[Dict[str, tf.Tensor]], Dict[str, tf.Tensor]],
    batch_size: int,
    training: bool,
    skip_examples: int = 0,
    seed: int = 0,
    shuffle_buffer_size: int = 0,
) -> tf.data.Dataset:
  """Parsed batches of a stream's elements (already sharded and, for
  training, repeated; a `seekable_stream` is shuffled too).

  Args:
    elements: this pipeline's elements (records, or dicts), in a
      deterministic order.
    parse: a batch of elements (dicts: `POSITION` taken out, and put back
      after) -> dict of tensors.
    batch_size: elements per batch; training drops a final partial batch.
    training: whole batches of a static size, and the shuffle.
    skip_examples: elements of this stream already consumed (a resume
      without a `POSITION`: they all pass through the stream again).
    seed, shuffle_buffer_size: a seeded shuffle buffer for training (none
      if 0: a seekable stream shuffles its windows instead).
  """
  if training and shuffle_buffer_size:
    elements = elements.shuffle(
        shuffle_buffer_size, seed=seed, reshuffle_each_iteration=True
    )
  if skip_examples:
    elements = elements.skip(skip_examples)
  dataset = elements.batch(batch_size, drop_remainder=training)

  def parse_batch(batch):
    position = None
    if isinstance(batch, dict):
      batch = dict(batch)
      position = batch.pop(POSITION, None)
    parsed = parse(batch)
    if training:
      # Whole batches: a static batch size, whatever `parse` could infer.
      parsed = {
          k: tf.ensure_shape(v, [batch_size] + v.shape[1:].as_list())
          for k, v in parsed.items()
      }
    if position is not None:
      parsed[POSITION] = position
    return parsed

  dataset = dataset.map(
      as_written(parse_batch),
      num_parallel_calls=tf.data.AUTOTUNE,
      deterministic=True,
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

  dataset = dataset.map(as_written(pad))
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

    dataset = dataset.batch(group).map(as_written(fill)).unbatch()
  return dataset


def _start_of(positions, context) -> Optional[StreamPosition]:
  """This pipeline's `StreamPosition` among the saved `POSITION` rows; None
  (with a warning) if they are of another number of pipelines."""
  rows = np.asarray(positions).reshape(-1, len(POSITION_FIELDS))
  pipelines = int(rows[:, 0].max()) + 1
  start = StreamPosition.of_pipeline(rows, context.input_pipeline_id)
  if pipelines != context.num_input_pipelines or start is None:
    logging.warning(
        "The checkpoint's input positions are of %d input pipelines, this "
        "run has %d: skipping the examples consumed instead",
        pipelines,
        context.num_input_pipelines,
    )
    return None
  return start


def distributed_dataset(
    strategy,
    task,
    *,
    batch_size: int,
    training: bool,
    start_step: int = 0,
    positions: Optional[np.ndarray] = None,
):
  """`task.build_inputs` per input pipeline of `strategy`: batches of
  `batch_size` per replica, the training stream after `start_step` steps;
  for evaluation, padded to static shapes (`padded_eval_batches`).

  A resumed stream starts at the pipeline's row of `positions` (the
  `POSITION` rows its training batches carried; the task's build_inputs
  gets it as `start`); without them, each replica's share of the steps is
  skipped (`skip_examples`).
  """

  def dataset_fn(context):
    local = context.num_replicas_in_sync // context.num_input_pipelines
    if not training:
      dataset = task.build_inputs(
          context, training=False, batch_size=batch_size
      )
      return padded_eval_batches(dataset, batch_size, local)
    start = None
    if start_step and positions is not None and np.size(positions):
      start = _start_of(positions, context)
    if start is not None:
      logging.info(
          "Input pipeline %d resumes at epoch %d, file group %d, window %d, "
          "element %d",
          context.input_pipeline_id,
          start.epoch,
          start.group,
          start.window,
          start.offset,
      )
      return task.build_inputs(
          context, training=True, batch_size=batch_size, start=start
      )
    return task.build_inputs(
        context,
        training=True,
        batch_size=batch_size,
        skip_examples=start_step * batch_size * local,
    )

  options = tf.distribute.InputOptions(experimental_fetch_to_device=True)
  # A task's own dataset functions, whatever they map, are traced as
  # written too.
  return strategy.distribute_datasets_from_function(
      as_written(dataset_fn), options
  )
