"""Small pretraining TFRecords in the original schema (tf.train.Example).

Token ids follow a Zipf-like distribution (so a masked-LM can learn something
quickly); the sentence-order label is 1 exactly when segment B starts with a
larger id than segment A (so SOP is learnable too).
"""

import numpy as np
import tensorflow as tf


def _int64(values):
  return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))


def _float(values):
  return tf.train.Feature(float_list=tf.train.FloatList(value=list(values)))


def make_example(rng, *, seq_length, max_predictions, vocab_size):
  length = int(rng.integers(seq_length // 2, seq_length + 1))
  probs = 1.0 / np.arange(1, vocab_size - 4)
  probs /= probs.sum()
  tokens = rng.choice(np.arange(5, vocab_size), size=length - 3, p=probs)
  split = len(tokens) // 2
  a, b = tokens[:split], tokens[split:]
  label = int(b[0] > a[0])
  ids = [2, *a, 3, *b, 3]
  segments = [0] * (len(a) + 2) + [1] * (len(b) + 1)
  candidates = [i for i, t in enumerate(ids) if t not in (2, 3)]
  num = min(max_predictions, max(1, int(round(len(ids) * 0.15))))
  positions = sorted(rng.choice(candidates, size=num, replace=False).tolist())
  labels = [ids[p] for p in positions]
  inputs = list(ids)
  for p in positions:
    inputs[p] = 4  # [MASK]
  pad = seq_length - len(ids)
  pad_pred = max_predictions - num
  feature = {
      "input_ids": _int64(inputs + [0] * pad),
      "input_mask": _int64([1] * len(ids) + [0] * pad),
      "segment_ids": _int64(segments + [0] * pad),
      "token_boundary": _int64([1] * len(ids) + [0] * pad),
      "masked_lm_positions": _int64(positions + [0] * pad_pred),
      "masked_lm_ids": _int64(labels + [0] * pad_pred),
      "masked_lm_weights": _float([1.0] * num + [0.0] * pad_pred),
      "next_sentence_labels": _int64([label]),
  }
  return tf.train.Example(features=tf.train.Features(feature=feature))


def write_records(
    path,
    num_examples,
    *,
    seq_length=32,
    max_predictions=5,
    vocab_size=64,
    seed=0,
):
  rng = np.random.default_rng(seed)
  with tf.io.TFRecordWriter(str(path)) as writer:
    for _ in range(num_examples):
      writer.write(
          make_example(
              rng,
              seq_length=seq_length,
              max_predictions=max_predictions,
              vocab_size=vocab_size,
          ).SerializeToString()
      )
  return str(path)
