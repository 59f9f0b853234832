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

from albert.pretraining.masking_ops import sub_key
from albert.pretraining.masking_ops import uniform_at
from albert.pretraining_data.document_pool import DocumentPool
from albert.pretraining_data.dynamic_masking import SHORT_DOCUMENT_ERROR
from albert.pretraining_data.documents_format import MIN_TOKENS

# Streams of draws (domain separation of the hash).
_TARGET, _A_END, _NSP, _PICK, _FIRST, _CUT, _SOP, _CUT_A, _CUT_B = range(20, 29)
_PICK_TRIES = 10  # As DocumentPool.pick.

DAMAGED_DOCUMENT_ERROR = "segment_lengths do not add up to its token_ids"


def _draw(keys, stream: int, j=0) -> tf.Tensor:
  return uniform_at(keys, stream, j)


def _below(u: tf.Tensor, n: tf.Tensor) -> tf.Tensor:
  """int32 uniform in [0, n) from u in [0, 1) (n >= 1)."""
  n = tf.cast(n, tf.int32)
  return tf.minimum(tf.cast(u * tf.cast(n, tf.float32), tf.int32), n - 1)


def _heads(keys, stream: int, n: tf.Tensor) -> tf.Tensor:
  """int32 [K]: how many of row k's n[k] fair coins come up heads."""
  j = tf.range(tf.reduce_max(tf.concat([n, [0]], 0)))[None, :]
  coins = (_draw(keys[:, None], stream, j) < 0.5) & (j < n[:, None])
  return tf.reduce_sum(tf.cast(coins, tf.int32), axis=1)


def _first_failing(bad, document_ids, detail):
  """The first document of the batch where `bad` holds, and `detail`."""
  at = tf.argmax(tf.cast(bad, tf.int32), output_type=tf.int32)
  return tf.gather(document_ids, at), tf.gather(detail, at)


class PairingOps:
  """Pairs the segments of a batch of documents (see the module).

  Every document of the batch is paired at once: one loop step finds the
  next chunk of every document, the rest is vectorised over all chunks.

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
    self._sop = sentence_task == "sop"
    self._nsp = sentence_task == "nsp"
    self._single_random = self._sop and single_segment == "random_document"
    self._random = self._nsp or self._single_random
    if self._random and pool is None:
      raise ValueError("this config draws random documents: pass the pool")
    self._is_word_start = tf.constant(np.asarray(is_word_start, bool))
    self._cls, self._sep = int(cls_id), int(sep_id)
    if self._random:
      self._pool_tokens = tf.constant(pool.tokens.astype(np.int32))
      self._pool_offsets = tf.constant(pool.offsets.astype(np.int32))
      self._pool_starts = tf.constant(pool.starts.astype(np.int32))
      self._pool_keys = tf.constant(pool.keys.astype(np.int64))

  def _checks(self, num_tokens, lengths, document_ids):
    """The one-line refusals of a short or damaged document."""
    short = num_tokens < MIN_TOKENS
    short_id, short_count = _first_failing(short, document_ids, num_tokens)
    bad_lengths = tf.not_equal(
        tf.reduce_sum(lengths, axis=1), num_tokens
    ) | tf.reduce_any(lengths <= 0, axis=1)
    damaged_id, _ = _first_failing(bad_lengths, document_ids, num_tokens)
    return [
        tf.debugging.Assert(
            ~tf.reduce_any(short),
            [
                tf.strings.format(
                    f"{SHORT_DOCUMENT_ERROR} {MIN_TOKENS} tokens (document_id"
                    " {}: {}); it was not made by create_pretraining_data "
                    "--output_format=documents: make it again",
                    (short_id, short_count),
                )
            ],
        ),
        tf.debugging.Assert(
            ~tf.reduce_any(bad_lengths),
            [
                tf.strings.format(
                    "document_id {}: " + DAMAGED_DOCUMENT_ERROR + "; the "
                    "shard is damaged: make it again",
                    (damaged_id,),
                )
            ],
        ),
    ]

  def _targets(self, keys):
    long = tf.fill(tf.shape(keys), self._max_tokens)
    if self._short_seq_prob == 0:
      return long
    short = 2 + _below(_draw(keys, _TARGET, 1), self._max_tokens - 1)
    return tf.where(_draw(keys, _TARGET, 0) < self._short_seq_prob, short, long)

  def _chunks(self, offsets, first_segment, last_segment, targets, keys):
    """The chunks of every document: the loop over a document's chunks,
    every document at once. offsets: int32 [S + 1], the batch's segment
    starts in its flat tokens. Returns int32 [K] each (documents in order,
    their chunks in order): row (the chunk's document), index (its place
    there), start, end (segments), a_end, and bool random_b."""
    rows = tf.size(keys)

    def body(start, chunk, arrays):
      live = start < last_segment
      base = tf.gather(offsets, tf.minimum(start, tf.size(offsets) - 1))
      end = tf.searchsorted(offsets, base + targets, side="left")
      end = tf.minimum(end, last_segment)
      count = end - start
      ck = sub_key(keys, chunk)
      a_end = tf.where(
          count >= 2, 1 + _below(_draw(ck, _A_END), tf.maximum(count - 1, 1)), 1
      )
      random_b = tf.zeros_like(live)
      if self._nsp:
        random_b = tf.equal(count, 1) | (_draw(ck, _NSP) < 0.5)
      elif self._single_random:
        random_b = tf.equal(count, 1)
      values = (live, chunk, start, end, a_end, random_b)
      arrays = tuple(a.write(a.size(), v) for a, v in zip(arrays, values))
      # A random B puts the chunk's unused segments back.
      after = tf.where(random_b, start + a_end, end)
      start = tf.where(live, after, start)
      return start, chunk + tf.cast(live, tf.int32), arrays

    dtypes = (tf.bool, tf.int32, tf.int32, tf.int32, tf.int32, tf.bool)
    arrays = tuple(
        tf.TensorArray(d, size=0, dynamic_size=True, element_shape=[None])
        for d in dtypes
    )
    _, _, arrays = tf.while_loop(
        lambda start, *_: tf.reduce_any(start < last_segment),
        body,
        (first_segment, tf.zeros([rows], tf.int32), arrays),
    )
    # [steps, rows] -> per row, its live steps in order.
    live, *values = (tf.transpose(a.stack()) for a in arrays)
    row = tf.broadcast_to(tf.range(rows)[:, None], tf.shape(live))
    return [tf.boolean_mask(v, live) for v in [row, *values]]

  def _split_cuts(self, tokens, lo, hi, ck):
    """Where a one-segment chunk [lo, hi) is cut: a random word start
    after lo (else a random piece after lo)."""
    starts = tf.gather(self._is_word_start, tokens)
    seen = tf.cumsum(tf.cast(starts, tf.int32))  # word starts up to p
    last = tf.size(tokens) - 1
    before = tf.gather(seen, tf.minimum(lo, last))
    count = tf.gather(seen, tf.clip_by_value(hi - 1, 0, last)) - before
    u = _draw(ck, _CUT)
    nth = _below(u, tf.maximum(count, 1))
    at_word = tf.searchsorted(seen, before + nth + 1, side="left")
    anywhere = lo + 1 + _below(u, tf.maximum(hi - lo - 1, 1))
    return tf.where(count > 0, at_word, anywhere)

  def _random_b(self, ck, exclude, target_b):
    """[lo, hi) in the pool's tokens: segments of a random pool document
    (not keyed `exclude`) from a random one on, up to target_b tokens."""
    size = tf.shape(self._pool_keys)[0]
    tries = _below(
        _draw(ck[:, None], _PICK, tf.range(_PICK_TRIES)[None, :]), size
    )
    other = tf.gather(self._pool_keys, tries) != exclude[:, None]
    which = tf.where(
        tf.reduce_any(other, axis=1),
        tf.argmax(tf.cast(other, tf.int32), axis=1, output_type=tf.int32),
        _PICK_TRIES - 1,
    )
    d = tf.gather(tries, which, batch_dims=1)
    first_segment = tf.gather(self._pool_starts, d)
    last_segment = tf.gather(self._pool_starts, d + 1)
    first = first_segment + _below(
        _draw(ck, _FIRST), last_segment - first_segment
    )
    base = tf.gather(self._pool_offsets, first)
    end = tf.searchsorted(self._pool_offsets, base + target_b, side="left")
    end = tf.minimum(tf.maximum(end, first + 1), last_segment)
    return base, tf.gather(self._pool_offsets, end)

  def __call__(
      self,
      tokens: tf.RaggedTensor,
      segment_lengths: tf.RaggedTensor,
      document_ids: tf.Tensor,
      keys: tf.Tensor,
  ) -> Dict[str, tf.Tensor]:
    """The pairs of a batch of documents.

    Args:
      tokens: int [D, None]: each document's tokens.
      segment_lengths: int [D, None]: its segments' lengths.
      document_ids: int64 [D]: each document's key in the pool.
      keys: uint32 [D]: each document's draws' key (`masking_ops.row_keys`).

    Returns:
      ids int32 [k, T] (`[CLS] A [SEP] B [SEP]`, unmasked, padded with 0),
      len_a, length, label, index (the pair's place in its document) and
      row (its document's place in the batch), int32 [k].
    """
    seq = self._seq_length
    document_ids = tf.cast(document_ids, tf.int64)
    lengths = tf.cast(segment_lengths, tf.int32)
    num_tokens = tf.cast(tokens.row_lengths(), tf.int32)
    with tf.control_dependencies(
        self._checks(num_tokens, lengths, document_ids)
    ):
      flat = tf.cast(tokens.flat_values, tf.int32)
    # Segment starts in the flat tokens; each document's segment range.
    offsets = tf.concat([[0], tf.cumsum(lengths.flat_values)], 0)
    splits = tf.cast(lengths.row_splits, tf.int32)
    targets = self._targets(keys)
    row, chunk, start, end, a_end, random_b = self._chunks(
        offsets, splits[:-1], splits[1:], targets, keys
    )
    ck = sub_key(tf.gather(keys, row), chunk)
    a_lo = tf.gather(offsets, start)
    a_hi = tf.gather(offsets, start + a_end)
    b_lo, b_hi = a_hi, tf.gather(offsets, end)
    if self._random:
      pool_lo, pool_hi = self._random_b(
          ck,
          tf.gather(document_ids, row),
          tf.gather(targets, row) - (a_hi - a_lo),
      )
      b_lo = tf.where(random_b, pool_lo, b_lo)
      b_hi = tf.where(random_b, pool_hi, b_hi)
    # A one-segment chunk paired with itself: cut in two.
    split = ~random_b & tf.equal(end - start, 1) & (a_hi - a_lo >= 2)
    cut = self._split_cuts(flat, a_lo, a_hi, ck)
    a_hi, b_lo = tf.where(split, cut, a_hi), tf.where(split, cut, b_lo)
    label = tf.cast(random_b, tf.int32)
    if self._sop:
      swap = ~random_b & (b_hi > b_lo) & (_draw(ck, _SOP) < 0.5)
      a_lo, b_lo = tf.where(swap, b_lo, a_lo), tf.where(swap, a_lo, b_lo)
      a_hi, b_hi = tf.where(swap, b_hi, a_hi), tf.where(swap, a_hi, b_hi)
      label = tf.where(swap, 1, label)
    # truncate_pair: each side's losses fixed by the lengths, the
    # front/back split of them binomial.
    len_a, len_b = a_hi - a_lo, b_hi - b_lo
    excess = tf.maximum(len_a + len_b - self._max_tokens, 0)
    gap = tf.minimum(excess, tf.abs(len_a - len_b))
    from_a = tf.where(len_a > len_b, gap, 0) + (excess - gap) // 2
    from_b = excess - from_a
    a_front, b_front = _heads(ck, _CUT_A, from_a), _heads(ck, _CUT_B, from_b)
    a_lo, a_hi = a_lo + a_front, a_hi - (from_a - a_front)
    b_lo, b_hi = b_lo + b_front, b_hi - (from_b - b_front)
    len_a, len_b = a_hi - a_lo, b_hi - b_lo
    # The rows: [CLS] A [SEP] B [SEP], padded.
    p = tf.range(seq)[None, :]
    la, lb = len_a[:, None], len_b[:, None]
    in_a = (p >= 1) & (p <= la)
    in_b = (p >= la + 2) & (p < la + 2 + lb)
    last = tf.size(flat) - 1
    own = tf.gather(
        flat,
        tf.clip_by_value(
            tf.where(in_a, a_lo[:, None] + p - 1, b_lo[:, None] + p - la - 2),
            0,
            last,
        ),
    )
    b_values = own
    if self._random:
      pooled = tf.gather(
          self._pool_tokens,
          tf.clip_by_value(
              b_lo[:, None] + p - la - 2, 0, tf.size(self._pool_tokens) - 1
          ),
      )
      b_values = tf.where(random_b[:, None], pooled, own)
    ids = tf.where(in_a, own, tf.where(in_b, b_values, 0))
    ids = tf.where(tf.equal(p, 0), self._cls, ids)
    ids = tf.where(
        tf.equal(p, la + 1) | tf.equal(p, la + 2 + lb), self._sep, ids
    )
    # A chunk whose B came out empty gives no pair.
    kept = len_b > 0
    counted = tf.cumsum(tf.cast(kept, tf.int32), exclusive=True)
    first_of_row = tf.math.unsorted_segment_min(counted, row, tf.size(keys))
    pairs = {
        "ids": ids,
        "len_a": len_a,
        "length": len_a + len_b + 3,
        "label": label,
        "index": counted - tf.gather(first_of_row, row),
        "row": row,
    }
    return {name: tf.boolean_mask(v, kept) for name, v in pairs.items()}
