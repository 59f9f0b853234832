"""Whole-word n-gram masking (paper 4.1; docs/reference.md section 4)."""

import numpy as np
import pytest

from albert.pretraining_data.block_generator import ExampleEncoder
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.instances import InstanceBuilder
from albert.pretraining_data.masking import NgramMasker


def _encoded(documents, tokenizer, passes=1, ngram_counts=None, **overrides):
  """(instance, original ids, feature arrays) for the sample corpus."""
  config = PretrainingDataConfig(**{"max_seq_length": 128, **overrides})
  builder = InstanceBuilder(config, tokenizer.is_word_start)
  encoder = ExampleEncoder(config, tokenizer)
  out = []
  for dupe in range(passes):
    for index in range(len(documents)):
      rng = np.random.default_rng([7, index, dupe])
      for instance in builder.build(documents, index, rng):
        original = np.concatenate(
            [
                [tokenizer.cls_id],
                instance.tokens_a,
                [tokenizer.sep_id],
                instance.tokens_b,
                [tokenizer.sep_id],
            ]
        )
        out.append(
            (instance, original, encoder.arrays(instance, rng, ngram_counts))
        )
  return out, encoder.masker


@pytest.mark.parametrize(
    "favor_shorter,expected",
    [(True, [6 / 11, 3 / 11, 2 / 11]), (False, [2 / 11, 3 / 11, 6 / 11])],
)
def test_drawn_ngram_lengths_follow_p_n(
    documents, tokenizer, favor_shorter, expected
):
  counts = [0] * 4
  examples, masker = _encoded(
      documents,
      tokenizer,
      passes=2,
      ngram_counts=counts,
      favor_shorter_ngram=favor_shorter,
  )
  np.testing.assert_allclose(masker.ngram_probabilities, expected)
  drawn = np.array(counts[1:]) / sum(counts)
  assert sum(counts) > 10000
  np.testing.assert_allclose(drawn, expected, atol=0.02)


def test_labels_are_the_original_ids_at_sorted_unique_positions(
    documents, tokenizer
):
  examples, masker = _encoded(documents, tokenizer)
  specials = {tokenizer.cls_id, tokenizer.sep_id}
  for _, original, arrays in examples:
    length = len(original)
    k = int(arrays["masked_lm_weights"].sum())
    positions = arrays["masked_lm_positions"][:k]
    assert 1 <= k <= masker.num_to_predict(length)
    assert np.all(np.diff(positions) > 0)  # Sorted and unique.
    assert np.all((positions > 0) & (positions < length - 1))
    assert not specials & set(
        original[positions].tolist()
    )  # Never [CLS]/[SEP].
    np.testing.assert_array_equal(
        arrays["masked_lm_ids"][:k], original[positions]
    )
    assert not arrays["masked_lm_positions"][k:].any()
    assert not arrays["masked_lm_ids"][k:].any()
    assert not arrays["masked_lm_weights"][k:].any()
    # Unmasked positions are unchanged.
    unmasked = np.ones(length, dtype=bool)
    unmasked[positions] = False
    np.testing.assert_array_equal(
        arrays["input_ids"][:length][unmasked], original[unmasked]
    )


def test_masks_cover_whole_words(documents, tokenizer):
  examples, _ = _encoded(documents, tokenizer)
  for _, original, arrays in examples:
    length = len(original)
    masked = np.zeros(length + 1, dtype=bool)
    masked[
        arrays["masked_lm_positions"][: int(arrays["masked_lm_weights"].sum())]
    ] = True
    special = np.isin(original, [tokenizer.cls_id, tokenizer.sep_id])
    continuation = ~tokenizer.is_word_start[original] & ~special
    for p in np.flatnonzero(continuation[1:]) + 1:
      if not special[p - 1]:  # Same word as p - 1: masked together.
        assert masked[p] == masked[p - 1]


def test_single_piece_masking_splits_words(documents, tokenizer):
  examples, _ = _encoded(documents, tokenizer, do_whole_word_mask=False)
  split = 0
  for _, original, arrays in examples:
    masked = np.zeros(len(original), dtype=bool)
    masked[
        arrays["masked_lm_positions"][: int(arrays["masked_lm_weights"].sum())]
    ] = True
    continuation = ~tokenizer.is_word_start[original]
    split += np.count_nonzero(continuation[1:] & (masked[1:] != masked[:-1]))
  assert split > 100


def test_budget_is_the_rounded_share_of_tokens(documents, tokenizer):
  examples, masker = _encoded(documents, tokenizer, max_predictions_per_seq=128)
  shares = []
  for _, original, arrays in examples:
    k = int(arrays["masked_lm_weights"].sum())
    budget = max(1, round(len(original) * 0.15))
    assert masker.num_to_predict(len(original)) == budget
    assert k <= budget
    shares.append(k / len(original))
  # Whole words of several pieces sometimes leave the budget a little short.
  assert 0.14 <= np.mean(shares) <= 0.15
  capped, _ = _encoded(documents, tokenizer, max_predictions_per_seq=5)
  assert max(int(a["masked_lm_weights"].sum()) for _, _, a in capped) == 5


def test_replacements_are_80_10_10_and_never_special(documents, tokenizer):
  examples, _ = _encoded(documents, tokenizer, passes=3)
  mask = kept = replaced = 0
  for _, original, arrays in examples:
    k = int(arrays["masked_lm_weights"].sum())
    positions = arrays["masked_lm_positions"][:k]
    inputs = arrays["input_ids"][positions]
    mask += np.count_nonzero(inputs == tokenizer.mask_id)
    kept += np.count_nonzero(inputs == original[positions])
    other = inputs[
        (inputs != tokenizer.mask_id) & (inputs != original[positions])
    ]
    replaced += len(other)
    assert np.isin(other, tokenizer.replacement_ids).all()
  total = mask + kept + replaced
  assert total > 30000
  assert abs(mask / total - 0.8) < 0.01
  assert abs(kept / total - 0.1) < 0.01  # (+ rare random == original)
  assert abs(replaced / total - 0.1) < 0.01


def test_masking_is_a_function_of_the_generator():
  is_start = np.ones(100, dtype=bool)
  masker = NgramMasker(
      is_word_start=is_start,
      mask_id=4,
      replacement_ids=np.arange(5, 100, dtype=np.int32),
      masked_lm_prob=0.15,
      max_predictions_per_seq=20,
      ngram=3,
  )
  ids = np.arange(10, 60, dtype=np.int32)
  special = np.zeros(50, dtype=bool)
  special[[0, 20, 49]] = True
  a = masker.mask(ids, special, np.random.default_rng(3))
  b = masker.mask(ids, special, np.random.default_rng(3))
  c = masker.mask(ids, special, np.random.default_rng(4))
  assert all(np.array_equal(x, y) for x, y in zip(a, b))
  assert not np.array_equal(a[1], c[1])
  assert len(a[1]) == round(50 * 0.15)
