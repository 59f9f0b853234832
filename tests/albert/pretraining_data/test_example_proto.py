"""The record schema (docs/reference.md section 4); TF-free wire format."""

import gzip

import numpy as np
import pytest
import tensorflow as tf

from albert import features
from albert.pretraining_data import example_proto
from albert.pretraining_data import manifest
from official.io import tfrecord
from albert.pretraining_data.data_config import PretrainingDataConfig

# docs/reference.md section 4, verbatim: name, dtype, length.
EXPECTED_SCHEMA = [
    ("input_ids", "int64", "max_seq_length"),
    ("input_mask", "int64", "max_seq_length"),
    ("segment_ids", "int64", "max_seq_length"),
    ("token_boundary", "int64", "max_seq_length"),
    ("masked_lm_positions", "int64", "max_predictions_per_seq"),
    ("masked_lm_ids", "int64", "max_predictions_per_seq"),
    ("masked_lm_weights", "float32", "max_predictions_per_seq"),
    ("next_sentence_labels", "int64", "one"),
]


def test_schema_is_the_reference_table():
  assert [
      (f.record_name, f.dtype, f.length) for f in features.PRETRAINING_FEATURES
  ] == EXPECTED_SCHEMA
  config = PretrainingDataConfig(max_seq_length=64, max_predictions_per_seq=9)
  lengths = {"max_seq_length": 64, "max_predictions_per_seq": 9, "one": 1}
  assert manifest.feature_schema(config) == [
      {"name": n, "dtype": d, "length": lengths[l]}
      for n, d, l in EXPECTED_SCHEMA
  ]


def _random_arrays(rng, seq_len=48, max_pred=7):
  return {
      # Ids up to 2**21 exercise 1- to 4-byte varints.
      "input_ids": rng.integers(0, 1 << 21, seq_len),
      "input_mask": rng.integers(0, 2, seq_len),
      "segment_ids": rng.integers(0, 2, seq_len),
      "token_boundary": rng.integers(0, 2, seq_len),
      "masked_lm_positions": rng.integers(0, seq_len, max_pred),
      "masked_lm_ids": np.array([0, 1, 127, 128, 16383, 16384, 30000]),
      "masked_lm_weights": rng.random(max_pred).astype(np.float32),
      "next_sentence_labels": np.array([1]),
  }


def test_serialized_example_parses_with_the_fixed_length_spec():
  rng = np.random.default_rng(0)
  spec = features.parse_spec(48, 7)
  for _ in range(5):
    arrays = _random_arrays(rng)
    parsed = tf.io.parse_single_example(
        example_proto.serialize_example(arrays), spec
    )
    assert set(parsed) == set(arrays)
    for name, values in arrays.items():
      np.testing.assert_array_equal(parsed[name].numpy(), values)
    # TensorFlow reads the same Example our bytes describe.
    proto = tf.train.Example.FromString(example_proto.serialize_example(arrays))
    assert list(proto.features.feature["input_ids"].int64_list.value) == (
        arrays["input_ids"].tolist()
    )


def test_varints_match_the_scalar_encoder():
  values = np.array(
      [0, 1, 127, 128, 300, 16383, 16384, 2**21 - 1, 2**21, 2**28, 2**35 + 3]
  )
  assert example_proto.varints(values) == b"".join(
      example_proto.varint(int(v)) for v in values
  )
  # Below 2**17 a lookup table encodes; the same bytes, for every dtype.
  small = np.array([0, 1, 127, 128, 300, 16383, 16384, 2**17 - 1, 5])
  for dtype in (np.int32, np.int64, np.uint32):
    assert example_proto.varints(small.astype(dtype)) == b"".join(
        example_proto.varint(int(v)) for v in small
    )
  with pytest.raises(ValueError):
    example_proto.varints(np.array([-1]))
  with pytest.raises(ValueError):
    example_proto.varints(np.array([300, -1], dtype=np.int32))


def test_serialize_rejects_other_features():
  arrays = _random_arrays(np.random.default_rng(1))
  del arrays["token_boundary"]
  with pytest.raises(ValueError, match="schema"):
    example_proto.serialize_example(arrays)


@pytest.mark.parametrize("gzipped", [False, True])
def test_tfrecord_framing_reads_back_in_tf_data(tmp_path, gzipped):
  records = [b"", b"x", bytes(range(256)) * 40, b"last"]
  path = str(tmp_path / "r.tfrecord")
  with open(path, "wb") as f, tfrecord.TFRecordWriter(f, gzipped) as w:
    w.write_all(records)
  dataset = tf.data.TFRecordDataset(
      path, compression_type="GZIP" if gzipped else ""
  )
  assert [r.numpy() for r in dataset] == records
  if gzipped:  # A real gzip stream, with no name or time in the header.
    assert gzip.decompress(open(path, "rb").read())[:8] == b"\0" * 8
    again = str(tmp_path / "again.tfrecord")
    with open(again, "wb") as f, tfrecord.TFRecordWriter(f, True) as w:
      w.write_all(records)
    assert open(again, "rb").read() == open(path, "rb").read()


def test_reads_records_written_by_tensorflow(tmp_path):
  path = str(tmp_path / "tf.tfrecord")
  with tf.io.TFRecordWriter(path) as writer:
    for r in (b"a", b"bc" * 1000):
      writer.write(r)
  with open(path, "rb") as f:
    assert list(tfrecord.read_frames(f)) == [b"a", b"bc" * 1000]
  data = bytearray(open(path, "rb").read())
  data[-6] ^= 1  # Corrupt the last record's data.
  open(path, "wb").write(bytes(data))
  with open(path, "rb") as f, pytest.raises(ValueError, match="corrupt"):
    list(tfrecord.read_frames(f))
