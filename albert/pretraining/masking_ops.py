"""N-gram whole-word masking in TensorFlow ops: `MaskingOps`.

The rules of `pretraining_data.masking.NgramMasker` (paper section 4.1,
docs/reference.md section 4), applied to a batch of pairs at once by ops
that a `tf.data` map runs on every core of any host, without Python:
- candidates are whole words (a piece that does not start a word joins
  the word before it); [CLS] and [SEP] never are, and no word continues
  across [SEP];
- budget = min(max_predictions_per_seq, max(1, round(length x
  masked_lm_prob))), length counting [CLS] and [SEP];
- words are visited in a random order; at each, n ~ p(n) proportional to
  1/n (reversed without favor_shorter_ngram) words are masked from there,
  n shortened while they overrun the budget, skipped if they still do or
  if they overlap earlier masks; visiting stops at the budget;
- a masked position becomes [MASK] with p 0.8, stays with p 0.1, and with
  p 0.1 becomes a random piece of the data's replacement pieces.

The visit loop runs over the whole batch at once: step i looks at the i-th
word of every row's order. It stops when every row has used its budget or
no word of its own could still fit.

Randomness is a counter-based hash (murmur3's 32-bit finaliser) of the
seed, the epoch, the document id and the pair's index in its document, so
a pair's masks depend on these only: never on its batch, the number of
input pipelines or threads. The draws are not the Python masker's (another
generator); the distributions are the same, and the tests compare them.
"""

from typing import Dict

import numpy as np
import tensorflow as tf

from albert.pretraining_data.masking import ngram_probabilities

# Streams of draws (domain separation of the hash).
_ORDER, _SIZES, _ACTION, _KEEP, _REPLACE = 1, 2, 3, 4, 5
_GOLDEN = 0x9E3779B9


def _u32(value) -> tf.Tensor:
  return tf.cast(value, tf.uint32)


def _mix(x: tf.Tensor) -> tf.Tensor:
  """murmur3's 32-bit finaliser: a bijection that spreads every input bit."""
  x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, _u32(16)))
  x = x * _u32(0x85EBCA6B)
  x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, _u32(13)))
  x = x * _u32(0xC2B2AE35)
  return tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, _u32(16)))


def row_keys(seed: int, *words: tf.Tensor) -> tf.Tensor:
  """uint32 [B]: one key per row from the seed and int64 [B] words (each
  word's two 32-bit halves go in)."""
  key = _mix(_u32(seed & 0xFFFFFFFF) + _u32(_GOLDEN))
  for word in words:
    word = tf.cast(word, tf.int64)
    for half in (word & 0xFFFFFFFF, tf.bitwise.right_shift(word, 32)):
      key = _mix(tf.bitwise.bitwise_xor(key, _u32(half)) + _u32(_GOLDEN))
  return key


def uniform_at(keys: tf.Tensor, stream: int, j: tf.Tensor) -> tf.Tensor:
  """float32 in [0, 1): draw j of each key's stream (keys and j broadcast)."""
  x = _mix(keys + _u32(stream) * _u32(0x632BE5AB))
  x = _mix(x ^ (_u32(j) * _u32(0x85157AF5) + _u32(_GOLDEN)))
  # The top 24 bits: exact in float32.
  return tf.cast(tf.bitwise.right_shift(x, _u32(8)), tf.float32) / float(
      1 << 24
  )


def uniform(keys: tf.Tensor, stream: int, width) -> tf.Tensor:
  """float32 [B, width] in [0, 1): draws 0..width-1 of each row's stream."""
  return uniform_at(keys[:, None], stream, tf.range(width)[None, :])


def sub_key(key: tf.Tensor, index: tf.Tensor) -> tf.Tensor:
  """A key derived from `key` and an int32 index (one per loop step)."""
  return _mix(key ^ (_u32(index) * _u32(0x9E3779B1) + _u32(_GOLDEN)))


class MaskingOps:
  """Masks batches of `[CLS] A [SEP] B [SEP]` pairs (see the module).

  Args:
    is_word_start: bool [vocab_size]: pieces that start a word.
    mask_id: [MASK]'s id.
    replacement_ids: int [R]: the pieces a random replacement may be.
    masked_lm_prob, max_predictions_per_seq, ngram, favor_shorter_ngram,
      do_whole_word_mask: as `NgramMasker`.
    seq_length: the pairs' padded length T.
  """

  def __init__(
      self,
      *,
      is_word_start: np.ndarray,
      mask_id: int,
      replacement_ids: np.ndarray,
      masked_lm_prob: float,
      max_predictions_per_seq: int,
      ngram: int,
      favor_shorter_ngram: bool = True,
      do_whole_word_mask: bool = True,
      seq_length: int,
  ):
    if ngram < 1:
      raise ValueError(f"ngram={ngram} must be at least 1")
    self._is_word_start = tf.constant(np.asarray(is_word_start, bool))
    self._mask_id = int(mask_id)
    self._replacement_ids = tf.constant(np.asarray(replacement_ids, np.int32))
    self._masked_lm_prob = float(masked_lm_prob)
    self._max_predictions = int(max_predictions_per_seq)
    self._ngram = int(ngram)
    self._whole_word = bool(do_whole_word_mask)
    self._seq_length = int(seq_length)
    pvals = ngram_probabilities(ngram, favor_shorter_ngram)
    self._cdf = tf.constant(np.cumsum(pvals)[:-1], tf.float32)

  def budget(self, length: tf.Tensor) -> tf.Tensor:
    """int32 [B]: masked positions each row may take (round half to even,
    as Python's `round`)."""
    if self._masked_lm_prob == 0:
      return tf.zeros_like(length)
    wanted = tf.round(tf.cast(length, tf.float64) * self._masked_lm_prob)
    wanted = tf.maximum(tf.cast(wanted, tf.int32), 1)
    return tf.minimum(wanted, self._max_predictions)

  def __call__(
      self,
      ids: tf.Tensor,
      len_a: tf.Tensor,
      length: tf.Tensor,
      label: tf.Tensor,
      keys: tf.Tensor,
  ) -> Dict[str, tf.Tensor]:
    """The masked record features of a batch (the examples format's names).

    Args:
      ids: int32 [B, T]: `[CLS] A [SEP] B [SEP]`, padded with 0.
      len_a, length, label: int32 [B]: A's length, the pair's, the label.
      keys: uint32 [B]: each row's key (`row_keys`).

    Returns:
      input_ids, input_mask, segment_ids, token_boundary int32 [B, T];
      masked_lm_positions, masked_lm_ids int32 [B, P]; masked_lm_weights
      float32 [B, P]; next_sentence_labels int32 [B, 1].
    """
    seq, pred = self._seq_length, self._max_predictions
    ids = tf.ensure_shape(tf.cast(ids, tf.int32), [None, seq])
    len_a = tf.cast(len_a, tf.int32)
    length = tf.cast(length, tf.int32)
    t = tf.range(seq)[None, :]
    valid = t < length[:, None]
    special = (
        tf.equal(t, 0)
        | tf.equal(t, len_a[:, None] + 1)
        | tf.equal(t, length[:, None] - 1)
    ) & valid
    candidate = valid & ~special
    word_start = tf.gather(self._is_word_start, ids) & valid
    chosen = self._choose(special, candidate, word_start, length, keys)
    masked = self._replace(ids, chosen, keys)
    # Positions sorted ascending, padded with 0: the smallest keys first.
    order_key = tf.where(chosen, t, seq + t)
    positions = tf.sort(order_key, axis=1)[:, :pred]
    weights = positions < seq
    positions = tf.where(weights, positions, 0)
    return {
        "input_ids": masked,
        "input_mask": tf.cast(valid, tf.int32),
        "segment_ids": tf.cast(valid & (t > len_a[:, None] + 1), tf.int32),
        "token_boundary": tf.cast(word_start | special, tf.int32),
        "masked_lm_positions": positions,
        "masked_lm_ids": tf.where(
            weights, tf.gather(ids, positions, batch_dims=1), 0
        ),
        "masked_lm_weights": tf.cast(weights, tf.float32),
        "next_sentence_labels": tf.cast(label, tf.int32)[:, None],
    }

  def _choose(self, special, candidate, word_start, length, keys):
    """bool [B, T]: the positions to mask."""
    seq = self._seq_length
    budget = self.budget(length)
    if self._masked_lm_prob == 0:
      return tf.zeros_like(candidate)
    after_special = tf.pad(special[:, :-1], [[0, 0], [1, 0]])
    if self._whole_word:
      starts = candidate & (word_start | after_special)
    else:
      starts = candidate
    # Candidate index of each candidate position; words are runs of
    # candidates, so word w covers candidate indices [C[w], C[w + 1]).
    cand_index = tf.cumsum(tf.cast(candidate, tf.int32), axis=1) - 1
    num_candidates = tf.reduce_sum(tf.cast(candidate, tf.int32), axis=1)
    word_index = tf.cumsum(tf.cast(starts, tf.int32), axis=1) - 1
    num_words = tf.reduce_sum(tf.cast(starts, tf.int32), axis=1)
    rows = tf.broadcast_to(
        tf.range(tf.shape(starts)[0])[:, None], tf.shape(starts)
    )
    start_at = tf.stack(
        [tf.boolean_mask(rows, starts), tf.boolean_mask(word_index, starts)], 1
    )
    # C [B, T + 1]: the first candidate index of each word; num_candidates
    # from the last word on.
    boundaries = tf.tensor_scatter_nd_update(
        tf.broadcast_to(
            num_candidates[:, None], [tf.shape(starts)[0], seq + 1]
        ),
        start_at,
        tf.boolean_mask(cand_index, starts),
    )
    # The visit order: words sorted by a random key (unused slots last).
    word_slots = tf.range(seq)[None, :]
    keys_order = uniform(keys, _ORDER, seq)
    keys_order = tf.where(word_slots < num_words[:, None], keys_order, 2.0)
    order = tf.argsort(keys_order, axis=1, stable=True)
    sizes = 1 + tf.reduce_sum(
        tf.cast(uniform(keys, _SIZES, seq)[:, :, None] >= self._cdf, tf.int32),
        axis=2,
    )
    lo_hi = self._visit(order, sizes, boundaries, num_words, budget)
    lo, hi = lo_hi  # [B, P] candidate-index intervals (empty: lo == hi)
    covered = tf.reduce_any(
        (cand_index[:, :, None] >= lo[:, None, :])
        & (cand_index[:, :, None] < hi[:, None, :]),
        axis=2,
    )
    return covered & candidate

  def _visit(self, order, sizes, boundaries, num_words, budget):
    """The greedy visit of the module's rules, every row at once: the
    chosen candidate-index intervals [lo, hi) int32 [B, P]."""
    pred, ngram = self._max_predictions, self._ngram
    batch = tf.shape(order)[0]
    span = tf.range(1, ngram + 1)[None, :]  # n = 1..ngram
    slot = tf.range(pred)[None, :]

    def word_length_ends(word, upto):
      """C[min(word + upto, num_words)]: [B, ngram]."""
      at = tf.minimum(word[:, None] + upto, num_words[:, None])
      return tf.gather(boundaries, at, batch_dims=1)

    def active(i, count, lo, hi, chosen):
      del lo, hi, chosen
      return (i < num_words) & (count < budget)

    def cond(i, count, lo, hi, chosen):
      return tf.reduce_any(active(i, count, lo, hi, chosen))

    def body(i, count, lo, hi, chosen):
      live = active(i, count, lo, hi, chosen)
      at = tf.minimum(i, tf.shape(order)[1] - 1)
      word = tf.gather(order, at[:, None], batch_dims=1)[:, 0]
      n = tf.gather(sizes, at[:, None], batch_dims=1)[:, 0]
      start = tf.gather(boundaries, word[:, None], batch_dims=1)[:, 0]
      ends = word_length_ends(word, span)  # [B, ngram]
      lengths = ends - start[:, None]
      fits = (span <= n[:, None]) & (
          count[:, None] + lengths <= budget[:, None]
      )
      # The longest n' <= n that fits (the Python masker shortens n to it).
      best = tf.reduce_max(tf.where(fits, span, 0), axis=1)
      end = tf.gather(ends, tf.maximum(best - 1, 0)[:, None], batch_dims=1)[
          :, 0
      ]
      used = slot < chosen[:, None]
      overlap = tf.reduce_any(
          used & (start[:, None] < hi) & (lo < end[:, None]), axis=1
      )
      take = live & (best > 0) & ~overlap
      write = take[:, None] & tf.equal(slot, chosen[:, None])
      lo = tf.where(write, start[:, None], lo)
      hi = tf.where(write, end[:, None], hi)
      count += tf.where(take, end - start, 0)
      chosen += tf.cast(take, tf.int32)
      return i + tf.cast(live, tf.int32), count, lo, hi, chosen

    zeros = tf.zeros([batch], tf.int32)
    empty = tf.zeros([batch, pred], tf.int32)
    _, _, lo, hi, _ = tf.while_loop(
        cond,
        body,
        (zeros, zeros, empty, empty, zeros),
        maximum_iterations=self._seq_length,
    )
    return lo, hi

  def _replace(self, ids, chosen, keys):
    """80% [MASK], 10% kept, 10% a random replacement piece."""
    seq = self._seq_length
    action = uniform(keys, _ACTION, seq)
    keep_or_random = uniform(keys, _KEEP, seq)
    pick = uniform(keys, _REPLACE, seq)
    count = tf.shape(self._replacement_ids)[0]
    which = tf.minimum(
        tf.cast(pick * tf.cast(count, tf.float32), tf.int32), count - 1
    )
    random_ids = tf.gather(self._replacement_ids, which)
    to_mask = chosen & (action < 0.8)
    to_random = chosen & ~(action < 0.8) & (keep_or_random >= 0.5)
    out = tf.where(to_mask, self._mask_id, ids)
    return tf.where(to_random, random_ids, out)
