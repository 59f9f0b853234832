"""The token ids the `tflite` benchmark's workers encode, the same in each."""

import numpy as np


def encoder_feed(seq_length: int, vocab_size: int):
  """The encoder's inputs for one example of `seq_length` random ids (seed
  0, ids from 5): int32 [1, seq_length] each."""
  rng = np.random.default_rng(0)
  ids = rng.integers(5, vocab_size, size=(1, seq_length)).astype(np.int32)
  return {
      "input_word_ids": ids,
      "input_mask": np.ones_like(ids),
      "input_type_ids": np.zeros_like(ids),
  }
