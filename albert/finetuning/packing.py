"""Packing a fine-tuning example's segments into the encoder's inputs.

`[CLS] first [SEP] (second [SEP])`, padded, as the original
`classifier_utils.py` and `squad_utils.py` build their features; shared by
every task family.
"""

from typing import Dict, Optional, Sequence

import numpy as np
import tensorflow as tf


def packed_input_spec(seq_length: int) -> Dict[str, tf.TensorSpec]:
  """The three int32 [seq_length] encoder inputs of one packed feature."""
  return {
      name: tf.TensorSpec([seq_length], tf.int32)
      for name in ("input_word_ids", "input_mask", "input_type_ids")
  }


def pack_segments(
    first: Sequence[int],
    second: Optional[Sequence[int]] = None,
    *,
    cls_id: int,
    sep_id: int,
    seq_length: int,
) -> Dict[str, np.ndarray]:
  """[CLS] first [SEP] (second [SEP]) padded with `<pad>` (id 0).

  The segments must already fit. Returns int32 [seq_length]
  `input_word_ids`, `input_mask`, `input_type_ids` (1 on second and its
  [SEP]).
  """
  ids = [cls_id, *first, sep_id]
  types = [0] * len(ids)
  if second is not None:
    ids += [*second, sep_id]
    types += [1] * (len(second) + 1)
  if len(ids) > seq_length:
    raise ValueError(
        f"packed length {len(ids)} exceeds seq_length="
        f"{seq_length}; trim the segments first"
    )
  pad = seq_length - len(ids)
  return {
      "input_word_ids": np.array(ids + [0] * pad, np.int32),
      "input_mask": np.array([1] * len(ids) + [0] * pad, np.int32),
      "input_type_ids": np.array(types + [0] * pad, np.int32),
  }
