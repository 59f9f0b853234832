"""official/core/seekable_stream.py: a stream started at the position an
element carried is the rest of the uninterrupted stream, whatever the
epoch, group, window and offset; and the order it promises."""

import numpy as np
import pytest
import tensorflow as tf

from official.core.seekable_stream import POSITION
from official.core.seekable_stream import StreamPosition
from official.core.seekable_stream import seekable_stream

FILES, RECORDS = 5, 7


@pytest.fixture(scope="module")
def files(tmp_path_factory):
  """5 files of 7 records "f:r"."""
  root = tmp_path_factory.mktemp("seekable")
  paths = []
  for f in range(FILES):
    path = str(root / f"part-{f}.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
      for r in range(RECORDS):
        writer.write(f"{f}:{r}".encode())
    paths.append(path)
  return paths


def _read_group(names):
  return tf.data.Dataset.from_tensor_slices(names).interleave(
      tf.data.TFRecordDataset, cycle_length=2, block_length=1
  )


def _expand(records, epoch):
  # Each record gives 1 to 3 elements (as a document gives pairs), the
  # count drawn from the record and the epoch.
  counts = 1 + tf.strings.to_hash_bucket_fast(
      records + tf.strings.as_string(epoch), 3
  )
  row = tf.repeat(tf.range(tf.size(records)), counts)
  return {
      "record": tf.gather(records, row),
      "epoch": tf.fill(tf.shape(row), epoch),
  }


def _stream(files, **options):
  return seekable_stream(
      files,
      read_group=_read_group,
      group_size=2,
      window_size=3,
      expand=_expand,
      training=True,
      seed=7,
      **options,
  )


def _take(dataset, n):
  return [
      {k: v.numpy() for k, v in element.items()} for element in dataset.take(n)
  ]


def test_a_stream_started_at_a_position_is_the_rest_of_it(files):
  epoch = sum(RECORDS * 2 for _ in range(FILES))  # at most 3 per record
  whole = _take(_stream(files), epoch * 3)
  positions = np.stack([e[POSITION] for e in whole])
  # It went through several epochs, each of 3 groups, windows and offsets.
  assert positions[:, 1].max() >= 2
  assert set(positions[:, 2]) == {0, 1, 2}
  assert positions[:, 3].max() >= 4
  for k in (0, 5, 20, 60, len(whole) - 40):
    start = StreamPosition.of_pipeline(positions[k : k + 1], 0)
    rest = _take(_stream(files, start=start), 30)
    for a, b in zip(rest, whole[k + 1 :]):
      assert a["record"] == b["record"] and a["epoch"] == b["epoch"]
      np.testing.assert_array_equal(a[POSITION], b[POSITION])


def test_each_epoch_holds_every_record_once_in_a_new_order(files):
  whole = _take(_stream(files), 3 * FILES * RECORDS * 3)
  epochs = {}
  for e in whole:
    epochs.setdefault(int(e["epoch"]), []).append(e["record"])
  orders = []
  for epoch in (0, 1):
    records = epochs[epoch]
    assert set(records) == {
        f"{f}:{r}".encode() for f in range(FILES) for r in range(RECORDS)
    }
    orders.append(list(dict.fromkeys(records)))
  assert orders[0] != orders[1]


def test_evaluation_is_one_pass_in_file_order(files):
  records = [
      e["record"]
      for e in seekable_stream(
          files,
          read_group=_read_group,
          group_size=2,
          window_size=3,
          expand=lambda records, epoch: {"record": records},
          training=False,
      ).as_numpy_iterator()
  ]
  # Groups of two files, interleaved one record each.
  assert records[:4] == [b"0:0", b"1:0", b"0:1", b"1:1"]
  assert len(records) == FILES * RECORDS
  assert records[-RECORDS:] == [f"4:{r}".encode() for r in range(RECORDS)]


def test_the_furthest_position_of_a_pipeline():
  rows = [[0, 1, 0, 2, 5], [1, 3, 0, 0, 1], [0, 1, 1, 0, 1], [0, 0, 9, 9, 9]]
  assert StreamPosition.of_pipeline(rows, 0) == StreamPosition(1, 1, 0, 1)
  assert StreamPosition.of_pipeline(rows, 1) == StreamPosition(3, 0, 0, 1)
  assert StreamPosition.of_pipeline(rows, 2) is None
