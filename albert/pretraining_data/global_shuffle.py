"""Shards as one global shuffle, and the mixing figure that shows it.

Every example carries a 64-bit random key (block_generator.Example): shard =
key mod num_shards, order = key div num_shards. A shard is its examples sorted
by order (ties, with probability about 2**-40 per pair, keep the canonical
(block, pass, example) order). Because the keys are independent and uniform,
each shard is a uniform random sample of all the job's examples, in uniformly
random order: the same as shuffling the whole output at once and dealing it
into shards. Sorting by a key also splits into ranges: a shard too large for
memory is written one order range ("part") at a time, each sorted in memory,
which gives the same bytes as sorting it whole; memory is bounded by one part,
whatever the corpus size.

The mixing figure (manifest "mixing"): for every source document with at least
`MIN_EXAMPLES` examples in a shard, the span of their positions (last - first)
divided by the shard's length. k uniformly shuffled positions span
(k - 1) / (k + 1) of the shard on average (0.78 for k = 8), so a well-mixed
output gives a mean near 0.8; an output that keeps a document's examples
together gives a mean near 0.
"""

import math
from typing import Dict, List, Sequence

import numpy as np

MIN_EXAMPLES = 8
ORDER_SPACE = 1 << 64


def order_range(num_shards: int) -> int:
  """Orders lie in [0, order_range): key div num_shards, key < 2**64."""
  return -(-ORDER_SPACE // num_shards)


def part_bounds(num_shards: int, num_parts: int) -> List[int]:
  """Order values splitting a shard into `num_parts` equal ranges."""
  top = order_range(num_shards)
  return [top * p // num_parts for p in range(num_parts + 1)]


def num_parts(shard_bytes: int, memory_bytes: int) -> int:
  return max(1, math.ceil(shard_bytes / max(1, memory_bytes)))


def shard_permutation(orders: np.ndarray) -> np.ndarray:
  """Indices that sort records (given in canonical order) by their order."""
  return np.argsort(np.asarray(orders, dtype=np.uint64), kind="stable")


def document_spans(documents: np.ndarray, min_examples: int = MIN_EXAMPLES):
  """(documents counted, sum of their spans) for one shard.

  Args:
    documents: the source document key of every record, in output order.
    min_examples: count only documents with at least this many records.
  """
  n = len(documents)
  if not n:
    return 0, 0.0
  _, inverse, counts = np.unique(
      documents, return_inverse=True, return_counts=True
  )
  positions = np.arange(n)
  first = np.full(len(counts), n, dtype=np.int64)
  last = np.zeros(len(counts), dtype=np.int64)
  np.minimum.at(first, inverse, positions)
  np.maximum.at(last, inverse, positions)
  kept = counts >= min_examples
  return int(kept.sum()), float(((last - first)[kept] / n).sum())


def mixing_summary(shards: Sequence[Dict]) -> Dict:
  """The manifest's "mixing" entry from per-shard (documents, span sum)."""
  documents = sum(s["mixing_documents"] for s in shards)
  span_sum = sum(s["mixing_span_sum"] for s in shards)
  return {
      "mean_document_span": span_sum / documents if documents else None,
      "documents": documents,
      "min_examples_per_document": MIN_EXAMPLES,
      "definition": (
          "for each source document with at least min_examples_per_document "
          "examples in a shard: (last - first position of its examples) / "
          "shard length; mean over such documents and shards. A uniform "
          "shuffle gives about (k - 1) / (k + 1) for k examples (0.78 for 8)."
      ),
  }


class ShardStats:
  """Running counts of one shard written part by part."""

  def __init__(self):
    self.examples = 0
    self.tokens = 0
    self._documents: List[np.ndarray] = []

  def add(self, documents: np.ndarray, tokens: np.ndarray) -> None:
    self.examples += len(documents)
    self.tokens += int(np.sum(tokens, dtype=np.int64))
    self._documents.append(np.asarray(documents, dtype=np.int64))

  def to_dict(self) -> Dict:
    documents = (
        np.concatenate(self._documents)
        if self._documents
        else np.zeros(0, np.int64)
    )
    counted, span_sum = document_spans(documents)
    return {
        "examples": self.examples,
        "tokens": self.tokens,
        "mixing_documents": counted,
        "mixing_span_sum": span_sum,
    }
