"""Segment pairs of one document in TensorFlow ops: `PairingOps`.

The rules of `pretraining_data.instances.InstanceBuilder` (paper section
4.1, docs/reference.md section 4; the original's
`create_instances_from_document`), as ops a `tf.data` map runs on every
core of any host, without Python:
- the target length is drawn once per document: max_num_tokens, or with
  probability short_seq_prob a uniform length in [2, max_num_tokens];
- a chunk gathers segments until it reaches the target (the first
  segment end at or past `start + target`: one `searchsorted`, not a loop
  over segments); A is its first `a_end` segments, `a_end` uniform in
  [1, count - 1], B the rest;
- SOP swaps A and B with p 1/2 (label 1); NSP takes B from a random other
  document of the pool with p 1/2 (always for a one-segment chunk) and puts
  the unused segments back; under SOP's random_document rule a one-segment
  chunk does the same; otherwise a one-segment chunk is cut at a random
  word start (the split rule);
- the pair is truncated to max_num_tokens as `truncate_pair`: the number of
  tokens each side loses is fixed by the lengths, and the share of them
  from the front is binomial(1/2).

Randomness is the counter-based hash of `masking_ops` (a key per document,
a sub-key per chunk), so a document's pairs depend on its key only. The
draws are not the Python builder's; the distributions are, and the tests
compare them.
"""

from typing import Dict, Optional

import numpy as np
import tensorflow as tf

from albert.masking_ops import sub_key
from albert.masking_ops import uniform_at
from albert.pretraining_data.document_pool import DocumentPool
from albert.pretraining_data.dynamic_masking import SHORT_DOCUMENT_ERROR
from albert.pretraining_data.documents_format import MIN_TOKENS

# Streams of draws (domain separation of the hash).
_TARGET, _A_END, _NSP, _PICK, _FIRST, _CUT, _SOP, _CUT_A, _CUT_B = range(20, 29)
_PICK_TRIES = 10  # As DocumentPool.pick.

DAMAGED_DOCUMENT_ERROR = "segment_lengths do not add up to its token_ids"


def _draw(key, stream: int, j=0) -> tf.Tensor:
  return uniform_at(key, stream, j)


def _below(u: tf.Tensor, n: tf.Tensor) -> tf.Tensor:
  """int32 uniform in [0, n) from u in [0, 1)."""
  n = tf.cast(n, tf.int32)
  return tf.minimum(tf.cast(u * tf.cast(n, tf.float32), tf.int32), n - 1)


def _heads(key, stream: int, n: tf.Tensor) -> tf.Tensor:
  """int32: how many of n fair coins come up heads."""
  coins = _draw(key, stream, tf.range(n)) < 0.5
  return tf.reduce_sum(tf.cast(coins, tf.int32))


class PairingOps:
  """Pairs one document's segments (see the module).

  Args:
    seq_length: the pairs' padded length T (max_num_tokens + 3).
    short_seq_prob, sentence_task, single_segment: as
      `PretrainingDataConfig`.
    is_word_start: bool [vocab_size]: pieces that start a word.
    cls_id, sep_id: the special pieces.
    pool: where random B come from (NSP and the random_document rule).
  """

  def __init__(
      self,
      *,
      seq_length: int,
      short_seq_prob: float,
      sentence_task: str,
      single_segment: Optional[str],
      is_word_start: np.ndarray,
      cls_id: int,
      sep_id: int,
      pool: Optional[DocumentPool] = None,
  ):
    self._seq_length = int(seq_length)
    self._max_tokens = self._seq_length - 3
    self._short_seq_prob = float(short_seq_prob)
    self._task = sentence_task
    self._nsp = sentence_task == "nsp"
    self._single_random = (
        sentence_task == "sop" and single_segment == "random_document"
    )
    self._random = self._nsp or self._single_random
    if self._random and pool is None:
      raise ValueError("this config draws random documents: pass the pool")
    self._is_word_start = tf.constant(np.asarray(is_word_start, bool))
    self._cls = tf.constant([cls_id], tf.int32)
    self._sep = tf.constant([sep_id], tf.int32)
    if self._random:
      self._pool_tokens = tf.constant(pool.tokens.astype(np.int32))
      self._pool_offsets = tf.constant(pool.offsets.astype(np.int32))
      self._pool_starts = tf.constant(pool.starts.astype(np.int32))
      self._pool_keys = tf.constant(pool.keys.astype(np.int64))

  def _checked(self, tokens, lengths, document_id):
    """tokens, offsets [S + 1], after the document's one-line checks."""
    num_tokens = tf.size(tokens)
    short = tf.debugging.Assert(
        num_tokens >= MIN_TOKENS,
        [
            tf.strings.format(
                f"{SHORT_DOCUMENT_ERROR} {MIN_TOKENS} tokens (document_id "
                "{}: {}); it was not made by create_pretraining_data "
                "--output_format=documents: make it again",
                (document_id, num_tokens),
            )
        ],
    )
    offsets = tf.concat([[0], tf.cumsum(lengths)], 0)
    damaged = tf.debugging.Assert(
        tf.equal(offsets[-1], num_tokens) & tf.reduce_all(lengths > 0),
        [
            tf.strings.format(
                "document_id {}: " + DAMAGED_DOCUMENT_ERROR + "; the shard "
                "is damaged: make it again",
                (document_id,),
            )
        ],
    )
    with tf.control_dependencies([short, damaged]):
      return tf.identity(tokens), tf.identity(offsets)

  def _target(self, key):
    long = tf.constant(self._max_tokens, tf.int32)
    if self._short_seq_prob == 0:
      return long
    short = 2 + _below(_draw(key, _TARGET, 1), self._max_tokens - 1)
    return tf.where(_draw(key, _TARGET, 0) < self._short_seq_prob, short, long)

  def _split(self, a, key):
    """A one-segment chunk cut at a random word start (else any piece)."""
    starts = tf.gather(self._is_word_start, a[1:])
    cuts = tf.cast(tf.where(starts)[:, 0], tf.int32) + 1
    cuts = tf.cond(
        tf.size(cuts) > 0, lambda: cuts, lambda: tf.range(1, tf.size(a))
    )
    cut = tf.gather(cuts, _below(_draw(key, _CUT), tf.size(cuts)))
    return a[:cut], a[cut:]

  def _random_b(self, key, exclude, target_b):
    """Segments of a random pool document (not keyed `exclude`) from a
    random one on, up to target_b tokens."""
    size = tf.shape(self._pool_keys)[0]
    tries = _below(_draw(key, _PICK, tf.range(_PICK_TRIES)), size)
    other = tf.gather(self._pool_keys, tries) != exclude
    which = tf.where(
        tf.reduce_any(other),
        tf.argmax(tf.cast(other, tf.int32), output_type=tf.int32),
        _PICK_TRIES - 1,
    )
    d = tries[which]
    offsets = self._pool_offsets[
        self._pool_starts[d] : self._pool_starts[d + 1] + 1
    ]
    segments = tf.size(offsets) - 1
    first = _below(_draw(key, _FIRST), segments)
    base = offsets[first]
    end = tf.searchsorted(offsets, [base + target_b], side="left")[0]
    end = tf.minimum(tf.maximum(end, first + 1), segments)
    return self._pool_tokens[base : offsets[end]]

  def _truncate(self, a, b, key):
    """`truncate_pair`: each side's losses fixed by the lengths, the
    front/back split of them binomial."""
    len_a, len_b = tf.size(a), tf.size(b)
    excess = tf.maximum(len_a + len_b - self._max_tokens, 0)
    gap = tf.minimum(excess, tf.abs(len_a - len_b))
    from_a = tf.where(len_a > len_b, gap, 0) + (excess - gap) // 2
    from_b = excess - from_a
    a_front = _heads(key, _CUT_A, from_a)
    b_front = _heads(key, _CUT_B, from_b)
    return (
        a[a_front : len_a - (from_a - a_front)],
        b[b_front : len_b - (from_b - b_front)],
    )

  def __call__(
      self,
      tokens: tf.Tensor,
      segment_lengths: tf.Tensor,
      document_id: tf.Tensor,
      key: tf.Tensor,
  ) -> Dict[str, tf.Tensor]:
    """The pairs of one document.

    Args:
      tokens: int [N]: the document's tokens.
      segment_lengths: int [S]: its segments' lengths.
      document_id: int64 scalar: its key in the pool.
      key: uint32 scalar: its draws' key (`masking_ops.row_keys`).

    Returns:
      ids int32 [k, T] (`[CLS] A [SEP] B [SEP]`, unmasked, padded with 0),
      len_a, length, label, index (int32 [k]: the pair's place in its
      document).
    """
    seq = self._seq_length
    tokens, offsets = self._checked(
        tf.cast(tokens, tf.int32),
        tf.cast(segment_lengths, tf.int32),
        tf.cast(document_id, tf.int64),
    )
    num_segments = tf.size(offsets) - 1
    target = self._target(key)

    def body(start, chunk, ids, len_a, length, label, kept):
      ck = sub_key(key, chunk)
      base = offsets[start]
      end = tf.searchsorted(offsets, [base + target], side="left")[0]
      end = tf.minimum(end, num_segments)  # A chunk ends at segment `end`.
      count = end - start
      a_end = tf.where(
          count >= 2, 1 + _below(_draw(ck, _A_END), tf.maximum(count - 1, 1)), 1
      )
      a = tokens[base : offsets[start + a_end]]
      b = tokens[offsets[start + a_end] : offsets[end]]
      random_b = tf.constant(False)
      if self._nsp:
        random_b = tf.equal(count, 1) | (_draw(ck, _NSP) < 0.5)
      elif self._single_random:
        random_b = tf.equal(count, 1)
      if self._random:
        b = tf.cond(
            random_b,
            lambda: self._random_b(ck, document_id, target - tf.size(a)),
            lambda: b,
        )
      split = ~random_b & tf.equal(count, 1) & (tf.size(a) >= 2)
      a, b = tf.cond(split, lambda: self._split(a, ck), lambda: (a, b))
      swap = tf.constant(False)
      if self._task == "sop":
        swap = ~random_b & (tf.size(b) > 0) & (_draw(ck, _SOP) < 0.5)
        a, b = tf.cond(swap, lambda: (b, a), lambda: (a, b))
      a, b = self._truncate(a, b, ck)
      row = tf.concat([self._cls, a, self._sep, b, self._sep], 0)
      n = tf.size(row)
      ids = ids.write(chunk, tf.pad(row, [[0, seq - n]]))
      len_a = len_a.write(chunk, tf.size(a))
      length = length.write(chunk, n)
      label = label.write(chunk, tf.cast(random_b | swap, tf.int32))
      kept = kept.write(chunk, tf.size(b) > 0)
      # A random B puts the chunk's unused segments back.
      start = tf.where(random_b, start + a_end, end)
      return start, chunk + 1, ids, len_a, length, label, kept

    def array(dtype, shape=()):
      return tf.TensorArray(
          dtype, size=0, dynamic_size=True, element_shape=shape
      )

    outputs = tf.while_loop(
        lambda start, *_: start < num_segments,
        body,
        (
            tf.constant(0),
            tf.constant(0),
            array(tf.int32, [seq]),
            array(tf.int32),
            array(tf.int32),
            array(tf.int32),
            array(tf.bool),
        ),
        maximum_iterations=num_segments,
    )
    ids, len_a, length, label, kept = (t.stack() for t in outputs[2:])
    ids = tf.ensure_shape(tf.reshape(ids, [-1, seq]), [None, seq])
    kept = tf.reshape(kept, [-1])
    index = tf.cumsum(tf.cast(kept, tf.int32), exclusive=True)
    pairs = {
        "ids": ids,
        "len_a": tf.reshape(len_a, [-1]),
        "length": tf.reshape(length, [-1]),
        "label": tf.reshape(label, [-1]),
        "index": index,
    }
    return {name: tf.boolean_mask(v, kept) for name, v in pairs.items()}
