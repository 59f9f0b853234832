"""albert.serving.packing.combine_segments against TF-Text's own
`combine_segments`, on random ragged batches, eagerly and traced."""

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text as tf_text

from albert.serving.packing import combine_segments


def _segments(rng, count, rows, dtype, splits):
  segments = []
  for _ in range(count):
    lengths = rng.integers(0, 5, size=rows)  # empty rows included
    values = rng.integers(5, 100, size=int(lengths.sum()))
    segments.append(
        tf.RaggedTensor.from_row_lengths(
            tf.constant(values, dtype), tf.constant(lengths, splits)
        )
    )
  return segments


@pytest.mark.parametrize("count", [1, 2, 3])
@pytest.mark.parametrize("rows", [0, 1, 7])
@pytest.mark.parametrize(
    "dtype,splits", [(tf.int32, tf.int64), (tf.int64, tf.int32)]
)
def test_combine_segments_equals_tf_text(count, rows, dtype, splits):
  rng = np.random.default_rng(count * 10 + rows)
  segments = _segments(rng, count, rows, dtype, splits)
  want_ids, want_types = tf_text.combine_segments(
      segments, start_of_sequence_id=1, end_of_segment_id=2
  )
  traced = tf.function(combine_segments, autograph=False)
  for ids, types in (
      combine_segments(segments, 1, 2),
      traced(segments, 1, 2),
  ):
    assert ids.dtype == types.dtype == dtype
    assert ids.row_splits.dtype == splits
    assert ids.to_list() == want_ids.to_list()
    assert types.to_list() == want_types.to_list()
    assert ids.row_splits.numpy().tolist() == (
        types.row_splits.numpy().tolist()
    )


def test_segments_with_other_splits_dtypes_take_the_first_ones():
  rng = np.random.default_rng(5)
  (first,) = _segments(rng, 1, 4, tf.int32, tf.int32)
  (second,) = _segments(rng, 1, 4, tf.int32, tf.int64)
  ids, types = combine_segments([first, second], 1, 2)
  want_ids, want_types = tf_text.combine_segments(
      [first.with_row_splits_dtype(tf.int64), second], 1, 2
  )
  assert ids.row_splits.dtype == tf.int32
  assert ids.to_list() == want_ids.to_list()
  assert types.to_list() == want_types.to_list()


def test_anything_but_2d_ragged_segments_is_refused():
  words = tf.ragged.constant([[[3, 4], [5]], [[6]]])  # [B, (words), (pieces)]
  for segments in ([], [words], [tf.constant([[3, 4]])]):
    with pytest.raises(ValueError, match="2-D ragged"):
      combine_segments(segments, 1, 2)
