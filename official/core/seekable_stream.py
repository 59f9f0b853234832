"""A training stream that a resumed run enters where it stopped, at a cost
that does not grow with the step.

The stream of one input pipeline is cut into units whose order is
arithmetic:

    epoch e      the pipeline's files, shuffled by (seed, e) (stateless);
    group g      files [g * group_size, (g + 1) * group_size) of that
                 order, read interleaved (`read_group`): the raw records;
    window w     records [w * window_size, (w + 1) * window_size) of the
                 group, expanded into elements (`expand`: one record, or the
                 pairs of a batch of documents) and shuffled together, by
                 (seed, pipeline, e, g, w);
    offset o     the element of the window.

Every training element carries `POSITION`, int32 [5]: (pipeline, e, g, w,
o + 1), where the stream continues after it. A trainer keeps the position
of the last element each pipeline gave it (in the checkpoint), and a resumed
run starts at `StreamPosition(e, g, w, o + 1)`: earlier epochs and groups
are skipped by arithmetic, the group's earlier windows as raw records
(before any parsing, pairing or shuffling), and the window's first elements
after expanding that one window. The cost is at most one group of raw
records and one window, whatever the step, and no iterator state is needed,
so it works under every `tf.distribute` strategy (TensorFlow checkpoints
the iterator of none of the distributed ones).

A window is a full shuffle of its elements, where a shuffle buffer would mix
each element with the next `buffer` ones: windows are independent, so the
mixing does not carry across window ends.
"""

import dataclasses
from typing import Callable, Dict, Optional, Sequence

import numpy as np
import tensorflow as tf

from official.modeling.no_autograph import as_written

POSITION = "input_position"
POSITION_FIELDS = ("pipeline", "epoch", "group", "window", "offset")


@dataclasses.dataclass(frozen=True, order=True)
class StreamPosition:
  """Where a pipeline's training stream goes on: element `offset` of window
  `window` of file group `group` of epoch `epoch` (fields compare in that
  order: a later position is greater)."""

  epoch: int = 0
  group: int = 0
  window: int = 0
  offset: int = 0

  @classmethod
  def of_pipeline(cls, rows, pipeline: int) -> Optional["StreamPosition"]:
    """The furthest position of `pipeline` among `POSITION` rows (one per
    replica: the replicas a pipeline feeds take its batches in turn), or
    None if no row is of that pipeline."""
    found = [
        cls(*(int(v) for v in row[1:]))
        for row in np.asarray(rows).reshape(-1, len(POSITION_FIELDS))
        if int(row[0]) == pipeline
    ]
    return max(found) if found else None


def _group_count(files: int, group_size: int) -> int:
  return -(-files // group_size)


def seekable_stream(
    files: Sequence[str],
    *,
    read_group: Callable[[tf.Tensor], tf.data.Dataset],
    group_size: int,
    window_size: int,
    expand: Callable[[tf.Tensor, tf.Tensor], Dict[str, tf.Tensor]],
    training: bool,
    seed: int = 0,
    pipeline_id: int = 0,
    start: Optional[StreamPosition] = None,
) -> tf.data.Dataset:
  """Elements (dicts) of one pipeline's stream, from `start` on.

  Args:
    files: this pipeline's files, sorted.
    read_group: file names (string [k]) -> their raw records, in a
      deterministic order (e.g. interleaved).
    group_size: files read together (interleaved).
    window_size: raw records expanded and shuffled together.
    expand: (raw records [n], epoch int64 scalar) -> dict of tensors [m, ...]
      (elements in their order; e.g. the pairs of n documents).
    training: epochs without end, shuffled, each element with `POSITION`;
      otherwise one pass in file order, nothing shuffled.
    seed: the shuffles' seed.
    pipeline_id: this pipeline (in `POSITION`, and in the windows' seeds).
    start: where to begin (a position `POSITION` gave); None: the start.
  """
  if not files:
    raise ValueError("seekable_stream: no files")
  start = start or StreamPosition()
  names = tf.constant(list(files))
  groups = _group_count(len(files), group_size)
  first = start.epoch * groups + start.group
  seed_pair = tf.constant([seed, pipeline_id], tf.int64)

  def windows_of(index):
    epoch, group = index // groups, index % groups
    order = names
    if training:
      order = tf.random.experimental.stateless_shuffle(
          names, seed=tf.stack([tf.constant(seed, tf.int64), epoch])
      )
    begin = group * group_size
    members = order[begin : tf.minimum(begin + group_size, len(files))]
    skip = tf.where(index == first, tf.constant(start.window, tf.int64), 0)
    raw = read_group(members).batch(window_size).enumerate().skip(skip)
    return raw.map(as_written(lambda w, records: (epoch, group, w, records)))

  def elements_of(epoch, group, window, records):
    elements = expand(records, epoch)
    if not training:
      return elements
    count = tf.shape(next(iter(elements.values())))[0]
    window_seed = seed_pair
    for word in (epoch, group, window):
      window_seed = tf.random.experimental.stateless_fold_in(window_seed, word)
    order = tf.random.experimental.stateless_shuffle(
        tf.range(count), seed=window_seed
    )
    elements = {k: tf.gather(v, order) for k, v in elements.items()}
    fixed = tf.cast(tf.stack([pipeline_id, epoch, group, window]), tf.int32)
    elements[POSITION] = tf.concat(
        [
            tf.tile(fixed[None, :], [count, 1]),
            tf.range(1, count + 1, dtype=tf.int32)[:, None],
        ],
        axis=1,
    )
    return elements

  last = np.iinfo(np.int64).max if training else groups
  stream = (
      tf.data.Dataset.range(first if training else 0, last)
      .flat_map(as_written(windows_of))
      .map(
          as_written(elements_of),
          num_parallel_calls=tf.data.AUTOTUNE,
          deterministic=True,
      )
      .unbatch()
  )
  if training and start.offset:
    stream = stream.skip(start.offset)
  return stream


class PositionKeeper:
  """A trainer's record of where each replica's stream goes on: `record`
  (replica context) keeps the last `POSITION` row of every replica's batch,
  `before_save` copies them into `variable` (what the checkpoint holds, of
  any number of replicas; empty for a stream without positions), `saved`
  reads back what a restored checkpoint held."""

  def __init__(self, strategy: tf.distribute.Strategy):
    width = len(POSITION_FIELDS)
    with strategy.scope():
      self._live = tf.Variable(
          tf.fill([strategy.num_replicas_in_sync, width], -1),
          trainable=False,
          aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
      )
    self.variable = tf.Variable(
        np.zeros([0, width], np.int32),
        shape=tf.TensorShape(None),
        trainable=False,
    )

  @as_written
  def record(self, position: tf.Tensor) -> None:
    """In a replica: `position` is the batch's `POSITION` [B, 5]."""
    context = tf.distribute.get_replica_context()
    self._live.assign(context.all_gather(position[-1:], axis=0))

  def before_save(self) -> None:
    rows = self._live.numpy()
    self.variable.assign(rows[:0] if (rows < 0).any() else rows)

  def clear(self) -> None:
    """Before a restore: a checkpoint without positions leaves none."""
    self.variable.assign(np.zeros([0, len(POSITION_FIELDS)], np.int32))

  def saved(self) -> np.ndarray:
    return self.variable.numpy()
