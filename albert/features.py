"""The pretraining TFRecord schema, and its translation to model input names.

The record layout is the original ALBERT `create_pretraining_data.py` format
(its `write_instance_to_example_files`), so TFRecords move both ways between
this package and the original release. The model uses the TF2 hub-style names
(`input_word_ids`, `input_type_ids`, ...); this module is the one place where
the two vocabularies meet. It imports nothing heavy so data-generation workers
stay light.
"""

import dataclasses
from typing import Dict, Tuple

# Which length a feature has: the sequence length, the number of masked
# positions, or one.
SEQ_LENGTH = "max_seq_length"
MAX_PREDICTIONS = "max_predictions_per_seq"
ONE = "one"


@dataclasses.dataclass(frozen=True)
class RecordFeature:
  """One fixed-length feature of a pretraining `tf.train.Example`.

  Attributes:
    record_name: key inside the TFRecord (the original tool's name).
    dtype: "int64" or "float32" (stored as an Int64List or a FloatList).
    length: SEQ_LENGTH, MAX_PREDICTIONS or ONE.
    model_name: the name the model and the input pipeline use.
  """

  record_name: str
  dtype: str
  length: str
  model_name: str


PRETRAINING_FEATURES: Tuple[RecordFeature, ...] = (
    RecordFeature("input_ids", "int64", SEQ_LENGTH, "input_word_ids"),
    RecordFeature("input_mask", "int64", SEQ_LENGTH, "input_mask"),
    RecordFeature("segment_ids", "int64", SEQ_LENGTH, "input_type_ids"),
    RecordFeature("token_boundary", "int64", SEQ_LENGTH, "token_boundary"),
    RecordFeature(
        "masked_lm_positions", "int64", MAX_PREDICTIONS, "masked_lm_positions"
    ),
    RecordFeature("masked_lm_ids", "int64", MAX_PREDICTIONS, "masked_lm_ids"),
    RecordFeature(
        "masked_lm_weights", "float32", MAX_PREDICTIONS, "masked_lm_weights"
    ),
    # The original keeps the NSP name; it holds the SOP label
    # (1 = segments swapped / random, 0 = in order).
    RecordFeature("next_sentence_labels", "int64", ONE, "sentence_order_label"),
)

RECORD_TO_MODEL: Dict[str, str] = {
    f.record_name: f.model_name for f in PRETRAINING_FEATURES
}


def feature_lengths(
    max_seq_length: int, max_predictions_per_seq: int
) -> Dict[str, int]:
  """Returns {record_name: fixed length} for the given data shapes."""
  sizes = {
      SEQ_LENGTH: max_seq_length,
      MAX_PREDICTIONS: max_predictions_per_seq,
      ONE: 1,
  }
  return {f.record_name: sizes[f.length] for f in PRETRAINING_FEATURES}


def parse_spec(max_seq_length: int, max_predictions_per_seq: int):
  """The `tf.io.parse_example` spec (FixedLenFeatures) of the schema."""
  import tensorflow as tf  # Imported here so data workers need not load TF.

  dtypes = {"int64": tf.int64, "float32": tf.float32}
  lengths = feature_lengths(max_seq_length, max_predictions_per_seq)
  return {
      f.record_name: tf.io.FixedLenFeature(
          [lengths[f.record_name]], dtypes[f.dtype]
      )
      for f in PRETRAINING_FEATURES
  }
