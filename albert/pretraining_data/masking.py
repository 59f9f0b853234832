"""`NgramMasker`: whole-word n-gram masking for the MLM task.

Paper section 4.1 / docs/reference.md section 4, as the original implements it:
- Candidates are whole words: a piece that does not start a word joins the
  word before it (`do_whole_word_mask`), else every piece is its own
  candidate. [CLS] and [SEP] are never candidates. Unlike the original, a
  word never continues across [SEP] (only possible after truncation).
- budget = min(max_predictions_per_seq, max(1, round(len * masked_lm_prob)))
  with len counting [CLS] and [SEP].
- Words are visited in random order; at each, n in 1..ngram is drawn with
  p(n) ~ 1/n (reversed if not favor_shorter_ngram), and the n-gram of words
  starting there is masked; if it would overrun the budget, n - 1, n - 2, ...
  are tried; it is skipped if still too long or if it overlaps earlier masks.
  Visiting stops when the budget is reached.
- Each masked position becomes [MASK] with p 0.8, stays with p 0.1, and with
  p 0.1 becomes a random piece that is never a control, unknown or unused
  symbol (the original could draw [CLS], <pad>, ...).
All draws come from the caller's seeded generator (the original drew n from
numpy's unseeded global generator).
"""

from typing import List, Optional, Tuple

import numpy as np


def ngram_probabilities(ngram: int, favor_shorter_ngram: bool) -> np.ndarray:
  """p(n) for n = 1..ngram: proportional to 1/n (reversed without
  favor_shorter_ngram)."""
  pvals = 1.0 / np.arange(1, ngram + 1)
  pvals /= pvals.sum()
  return pvals if favor_shorter_ngram else pvals[::-1]


class NgramMasker:
  """Chooses and applies the masked positions of one sequence."""

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
  ):
    if ngram < 1:
      raise ValueError(f"ngram={ngram} must be at least 1")
    self._is_word_start = is_word_start
    self._mask_id = mask_id
    self._replacement_ids = replacement_ids
    self._masked_lm_prob = masked_lm_prob
    self._max_predictions = max_predictions_per_seq
    self._do_whole_word_mask = do_whole_word_mask
    pvals = ngram_probabilities(ngram, favor_shorter_ngram)
    self.ngram_probabilities = pvals
    self._cdf = np.cumsum(pvals)
    self._cdf[-1] = 1.0

  def num_to_predict(self, length: int) -> int:
    return min(
        self._max_predictions, max(1, round(length * self._masked_lm_prob))
    )

  def choose(
      self,
      input_ids: np.ndarray,
      special: np.ndarray,
      rng: np.random.Generator,
      ngram_counts: Optional[List[int]] = None,
  ) -> np.ndarray:
    """Sorted, unique positions to mask.

    Args:
      input_ids: int [L], the sequence with [CLS] and [SEP].
      special: bool [L], True at [CLS] / [SEP] (never masked).
      rng: the sequence's generator.
      ngram_counts: if given, counts[n] += 1 for every n drawn (before the
        budget shortens it), for statistics.
    """
    if self._masked_lm_prob == 0:
      return np.zeros(0, dtype=np.int64)
    cand_pos = np.flatnonzero(~special)  # Positions that may be masked.
    if self._do_whole_word_mask:
      starts = self._is_word_start[input_ids[cand_pos]]
      starts[0] = True
      starts[1:] |= special[cand_pos[1:] - 1]  # First piece after [SEP].
      word_offsets = np.flatnonzero(starts)
    else:
      word_offsets = np.arange(len(cand_pos))
    num_words = len(word_offsets)
    word_offsets = word_offsets.tolist() + [len(cand_pos)]
    budget = self.num_to_predict(len(input_ids))
    order = rng.permutation(num_words).tolist()
    sizes = (
        np.searchsorted(self._cdf, rng.random(num_words), side="right") + 1
    ).tolist()
    covered = bytearray(len(cand_pos))
    count = 0
    for word, n in zip(order, sizes):
      if count >= budget:
        break
      if ngram_counts is not None:
        ngram_counts[n] += 1
      lo = word_offsets[word]
      hi = word_offsets[min(word + n, num_words)]
      while count + hi - lo > budget and n > 1:
        n -= 1
        hi = word_offsets[min(word + n, num_words)]
      if count + hi - lo > budget or covered.find(1, lo, hi) >= 0:
        continue
      covered[lo:hi] = b"\x01" * (hi - lo)
      count += hi - lo
    chosen = np.frombuffer(bytes(covered), dtype=np.uint8).astype(bool)
    return cand_pos[chosen]

  def apply(
      self,
      input_ids: np.ndarray,
      positions: np.ndarray,
      rng: np.random.Generator,
  ) -> np.ndarray:
    """The masked copy of input_ids: 80% [MASK], 10% kept, 10% random."""
    output = input_ids.copy()
    k = len(positions)
    if not k:
      return output
    draw = rng.random(k)
    keep_or_random = rng.random(k)
    random_ids = self._replacement_ids[
        rng.integers(len(self._replacement_ids), size=k)
    ]
    to_mask = draw < 0.8
    to_random = ~to_mask & (keep_or_random >= 0.5)
    output[positions[to_mask]] = self._mask_id
    output[positions[to_random]] = random_ids[to_random]
    return output

  def mask(
      self,
      input_ids: np.ndarray,
      special: np.ndarray,
      rng: np.random.Generator,
      ngram_counts: Optional[List[int]] = None,
  ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Returns (masked input_ids, positions, labels = original ids there)."""
    positions = self.choose(input_ids, special, rng, ngram_counts)
    return (
        self.apply(input_ids, positions, rng),
        positions,
        input_ids[positions],
    )
