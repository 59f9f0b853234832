"""The pretraining TFRecord schema equals docs/reference.md section 4."""

import tensorflow as tf

from albert import features

# docs/reference.md section 4: name -> (dtype, length).
EXPECTED = {
    "input_ids": ("int64", "max_seq_length"),
    "input_mask": ("int64", "max_seq_length"),
    "segment_ids": ("int64", "max_seq_length"),
    "token_boundary": ("int64", "max_seq_length"),
    "masked_lm_positions": ("int64", "max_predictions_per_seq"),
    "masked_lm_ids": ("int64", "max_predictions_per_seq"),
    "masked_lm_weights": ("float32", "max_predictions_per_seq"),
    "next_sentence_labels": ("int64", "one"),
}


def test_schema_table():
  got = {
      f.record_name: (f.dtype, f.length) for f in features.PRETRAINING_FEATURES
  }
  assert got == EXPECTED


def test_parse_spec_lengths_and_dtypes():
  spec = features.parse_spec(max_seq_length=128, max_predictions_per_seq=20)
  assert set(spec) == set(EXPECTED)
  assert spec["input_ids"] == tf.io.FixedLenFeature([128], tf.int64)
  assert spec["masked_lm_weights"] == tf.io.FixedLenFeature([20], tf.float32)
  assert spec["next_sentence_labels"] == tf.io.FixedLenFeature([1], tf.int64)


def test_model_names_are_the_encoder_inputs():
  assert features.RECORD_TO_MODEL["input_ids"] == "input_word_ids"
  assert features.RECORD_TO_MODEL["segment_ids"] == "input_type_ids"
  assert features.RECORD_TO_MODEL["input_mask"] == "input_mask"
  assert len(set(features.RECORD_TO_MODEL.values())) == len(EXPECTED)
