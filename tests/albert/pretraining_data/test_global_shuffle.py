"""global_shuffle: sorting by random places is a uniform shuffle; the
mixing figure against a brute-force computation."""

import numpy as np

from albert.pretraining_data import global_shuffle


def _spans_by_hand(documents, min_examples):
  positions = {}
  for position, document in enumerate(documents):
    positions.setdefault(document, []).append(position)
  spans = [
      (max(p) - min(p)) / len(documents)
      for p in positions.values()
      if len(p) >= min_examples
  ]
  return len(spans), sum(spans)


def test_document_spans_match_a_brute_force_count():
  rng = np.random.default_rng(0)
  for _ in range(20):
    documents = rng.integers(0, 30, size=int(rng.integers(1, 400)))
    counted, span_sum = global_shuffle.document_spans(documents, 8)
    expected = _spans_by_hand(documents.tolist(), 8)
    assert counted == expected[0]
    np.testing.assert_allclose(span_sum, expected[1], rtol=1e-12)
  assert global_shuffle.document_spans(np.zeros(0, np.int64)) == (0, 0.0)


def test_uniform_shuffle_spans_k_minus_1_over_k_plus_1():
  # 500 documents of 8 examples each: a uniform shuffle spreads each over
  # (k - 1) / (k + 1) = 7/9 of the shard on average; kept together, ~0.
  documents = np.repeat(np.arange(500), 8)
  counted, span_sum = global_shuffle.document_spans(documents)
  assert counted == 500 and span_sum / counted < 0.01
  shuffled = np.random.default_rng(1).permutation(documents)
  counted, span_sum = global_shuffle.document_spans(shuffled)
  assert counted == 500
  assert abs(span_sum / counted - 7 / 9) < 0.01


def test_parts_sorted_one_by_one_equal_one_sort():
  num_shards = 3
  rng = np.random.default_rng(2)
  keys = rng.integers(0, 2**64, size=5000, dtype=np.uint64)
  orders = keys // np.uint64(num_shards)
  whole = orders[global_shuffle.shard_permutation(orders)]
  for parts in (1, 2, 7):
    bounds = global_shuffle.part_bounds(num_shards, parts)
    assert bounds[0] == 0
    assert bounds[-1] == global_shuffle.order_range(num_shards)
    assert orders.max() < bounds[-1]
    pieces = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
      inside = orders[(orders >= np.uint64(lo)) & (orders < hi)]
      pieces.append(inside[global_shuffle.shard_permutation(inside)])
    np.testing.assert_array_equal(np.concatenate(pieces), whole)


def test_ties_keep_the_canonical_order():
  orders = np.array([5, 1, 5, 1, 5], dtype=np.uint64)
  np.testing.assert_array_equal(
      global_shuffle.shard_permutation(orders), [1, 3, 0, 2, 4]
  )


def test_num_parts_bounds_the_memory():
  assert global_shuffle.num_parts(0, 100) == 1
  assert global_shuffle.num_parts(100, 100) == 1
  assert global_shuffle.num_parts(101, 100) == 2
  assert global_shuffle.num_parts(1000, 100) == 10
