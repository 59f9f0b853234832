"""generate_block: passes split into groups give the same records."""

import os

from albert.pretraining_data import corpus_reader
from albert.pretraining_data.block_generator import BlockStats
from albert.pretraining_data.block_generator import generate_block
from albert.pretraining_data.block_generator import pass_groups
from albert.pretraining_data.data_config import PretrainingDataConfig


def test_pass_groups_cover_every_pass_once():
  for blocks, dupe in [(1, 40), (3, 5), (100, 40), (16, 1), (0, 3)]:
    groups = pass_groups(blocks, dupe)
    assert [p for g in groups for p in g] == list(range(dupe))
    assert len(groups) == min(dupe, max(1, -(-16 // max(1, blocks))))


def test_groups_of_passes_give_the_same_records(corpus_path, tokenizer):
  config = PretrainingDataConfig(
      max_seq_length=64,
      dupe_factor=5,
      block_bytes=64 << 10,
      single_segment="split",  # no document pool needed
  )
  block = corpus_reader.plan_blocks(
      [(corpus_path, os.path.getsize(corpus_path))], config.block_bytes
  )[2]
  whole_stats = BlockStats()
  whole = list(generate_block(block, tokenizer, config, whole_stats))
  parts, part_stats = [], BlockStats()
  for passes in (range(0, 2), range(2, 3), range(3, 5)):
    stats = BlockStats()
    parts += generate_block(block, tokenizer, config, stats, passes=passes)
    part_stats.add(stats)
  assert parts == whole and len(whole) > 100
  assert part_stats == whole_stats  # Documents are counted once.
  assert whole_stats.documents > 10
  assert whole_stats.examples == len(whole)
