"""Segment pairs: SOP / NSP / none, target lengths, truncation."""

import numpy as np
import pytest

from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.instances import InstanceBuilder
from albert.pretraining_data.instances import truncate_pair
from tests.albert.pretraining_data.segments import document_from_segments


def _instances(documents, tokenizer, passes=1, **overrides):
  # The split rule (ours) unless overridden: these tests check its pairs.
  config = PretrainingDataConfig(
      **{"max_seq_length": 128, "single_segment": "split", **overrides}
  )
  builder = InstanceBuilder(config, tokenizer.is_word_start)
  out = []
  for dupe in range(passes):
    for index in range(len(documents)):
      rng = np.random.default_rng([11, index, dupe])
      out.extend((index, inst) for inst in builder.build(documents, index, rng))
  return config, out


def _starts(haystack: np.ndarray, needle: np.ndarray) -> np.ndarray:
  """Every index where `needle` occurs as a contiguous run in `haystack`."""
  candidates = np.flatnonzero(
      haystack[: len(haystack) - len(needle) + 1] == needle[0]
  )
  return np.array(
      [
          s
          for s in candidates
          if np.array_equal(haystack[s : s + len(needle)], needle)
      ],
      dtype=np.int64,
  )


def _in_order(
    tokens: np.ndarray, first: np.ndarray, second: np.ndarray
) -> bool:
  """Whether `first` occurs in `tokens` before an occurrence of `second`."""
  a, b = _starts(tokens, first), _starts(tokens, second)
  return bool(a.size and b.size and a.min() + len(first) <= b.max())


def test_sop_pairs_are_in_order_or_swapped(documents, tokenizer):
  config, instances = _instances(documents, tokenizer)
  labels = np.array([inst.label for _, inst in instances])
  assert len(instances) > 800
  assert abs(labels.mean() - 0.5) < 0.04
  for index, inst in instances[:600]:
    tokens = documents[index].tokens
    # Both segments come from the document (no random B), in order or not.
    if inst.label == 0:
      assert _in_order(tokens, inst.tokens_a, inst.tokens_b)
    else:
      assert _in_order(tokens, inst.tokens_b, inst.tokens_a)
    assert len(inst.tokens_a) and len(inst.tokens_b)
    assert len(inst.tokens_a) + len(inst.tokens_b) <= config.max_num_tokens


def test_nsp_negatives_come_from_other_documents(documents, tokenizer):
  _, instances = _instances(documents, tokenizer, sentence_task="nsp")
  labels = np.array([inst.label for _, inst in instances])
  assert labels.mean() > 0.5  # Single-segment chunks are always negatives.
  foreign = in_order = 0
  for index, inst in instances[:600]:
    tokens = documents[index].tokens
    assert _starts(tokens, inst.tokens_a).size
    if inst.label == 0:
      assert _in_order(tokens, inst.tokens_a, inst.tokens_b)
      in_order += 1
    else:
      foreign += not _starts(tokens, inst.tokens_b).size
  assert in_order > 50 and foreign > 200


def test_no_sentence_task_keeps_order(documents, tokenizer):
  _, instances = _instances(documents, tokenizer, sentence_task="none")
  assert not any(inst.label for _, inst in instances)
  for index, inst in instances[:300]:
    assert _in_order(documents[index].tokens, inst.tokens_a, inst.tokens_b)


def test_ten_percent_of_documents_get_a_short_target(documents, tokenizer):
  config, instances = _instances(documents, tokenizer, passes=4)
  assert len(instances) > 4000
  # One target per document and pass (the original's rule): the instances of
  # one pass over one document are consecutive and share it.
  groups, previous = [], None
  for index, inst in instances:
    if index != previous:
      groups.append([])
      previous = index
    groups[-1].append(inst.target_length)
  assert all(len(set(targets)) == 1 for targets in groups)
  group_short = np.array([t[0] < config.max_num_tokens for t in groups])
  assert len(groups) > 300
  assert abs(group_short.mean() - 0.1) < 0.04
  targets = np.array([inst.target_length for _, inst in instances])
  short = targets < config.max_num_tokens
  assert targets[short].min() >= 2
  lengths = np.array([len(i.tokens_a) + len(i.tokens_b) for _, i in instances])
  # Short targets give short sequences on average.
  assert lengths[short].mean() < 0.75 * lengths[~short].mean()
  _, none_short = _instances(documents, tokenizer, short_seq_prob=0.0)
  assert all(i.target_length == 125 for _, i in none_short)


def test_single_segment_documents_are_split_for_sop(tokenizer):
  sentence = np.array(
      tokenizer.tokenize(
          "a single sentence that is long enough to be cut into two parts"
      ),
      dtype=np.int32,
  )
  documents = [
      document_from_segments([sentence]),
      document_from_segments([sentence[:1]]),
  ]  # One token: no pair.
  config = PretrainingDataConfig(max_seq_length=128, single_segment="split")
  builder = InstanceBuilder(config, tokenizer.is_word_start)
  labels = []
  for seed in range(40):
    (inst,) = builder.build(documents, 0, np.random.default_rng(seed))
    first, second = (
        (inst.tokens_a, inst.tokens_b)
        if inst.label == 0
        else (inst.tokens_b, inst.tokens_a)
    )
    np.testing.assert_array_equal(np.concatenate([first, second]), sentence)
    assert tokenizer.is_word_start[second[0]]  # Cut at a word start.
    labels.append(inst.label)
    assert builder.build(documents, 1, np.random.default_rng(seed)) == []
  assert 0 < sum(labels) < 40


def test_single_segments_take_a_random_document_as_the_original(tokenizer):
  # --single_segment=random_document: a chunk of one segment keeps it whole
  # as A and takes B from another document, label 1, never swapped; chunks
  # of several segments are SOP pairs, swapped half the time.
  one = np.arange(10, 30, dtype=np.int32)
  other = [np.arange(100, 110, dtype=np.int32), np.arange(110, 125)]
  documents = [document_from_segments([one]), document_from_segments(other)]
  config = PretrainingDataConfig(
      max_seq_length=128, single_segment="random_document", short_seq_prob=0
  )
  builder = InstanceBuilder(config, tokenizer.is_word_start)
  swapped = 0
  for seed in range(40):
    (single,) = builder.build(documents, 0, np.random.default_rng(seed))
    assert single.label == 1
    np.testing.assert_array_equal(single.tokens_a, one)
    assert set(single.tokens_b.tolist()) <= set(range(100, 125))
    (pair,) = builder.build(documents, 1, np.random.default_rng(seed))
    first = pair.tokens_b if pair.label else pair.tokens_a
    np.testing.assert_array_equal(first, other[0])
    swapped += pair.label
  assert 8 < swapped < 32


def _original_truncation(a, b, max_num_tokens, coins):
  """The original's loop, one token per step, with given front/back coins."""
  a, b, coins = list(a), list(b), iter(coins)
  while len(a) + len(b) > max_num_tokens:
    trunc = a if len(a) > len(b) else b
    if next(coins):
      del trunc[0]
    else:
      trunc.pop()
  return a, b


@pytest.mark.parametrize("seed", range(30))
def test_truncation_equals_the_original_loop(seed):
  rng = np.random.default_rng(seed)
  len_a, len_b = rng.integers(1, 200, size=2)
  a = np.arange(len_a, dtype=np.int32)
  b = np.arange(1000, 1000 + len_b, dtype=np.int32)
  max_num_tokens = int(rng.integers(2, 300))
  excess = max(0, len_a + len_b - max_num_tokens)
  coins = np.random.default_rng(seed + 100).random(excess) < 0.5
  got_a, got_b = truncate_pair(
      a, b, max_num_tokens, np.random.default_rng(seed + 100)
  )
  want_a, want_b = _original_truncation(a, b, max_num_tokens, coins)
  assert got_a.tolist() == want_a and got_b.tolist() == want_b
