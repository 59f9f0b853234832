"""Segment pairs `[CLS] A [SEP] B [SEP]` for SOP, NSP or no sentence task.

The original's logic (docs/reference.md section 4, paper section 4.1): sentences
of a document are gathered into a chunk until it reaches a target length
(max_seq_length - 3, or with probability short_seq_prob a uniform length in
[2, max_seq_length - 3]); A is a random-length prefix of the chunk's
sentences, B the rest; the pair is truncated to max_seq_length - 3 tokens by
dropping tokens one at a time from the longer side, front or back at random.

- SOP (paper): label 1 = A and B swapped, 0 = in order, 50% each.
- NSP (BERT, `--random_next_sentence`): label 1 = B from a random other
  document of the corpus (the sentences not used are put back), 0 = in
  order.
- none: always in order, label 0 (train with the sentence loss switched off).

Random documents come from a `DocumentPool`: a seeded sample of documents
from every block of the corpus (see document_pool), so a negative's B can
come from anywhere in the corpus, as in the original, which holds every
document in memory.

Single-segment chunks (a one-sentence document, a sentence longer than the
target, or the last sentence of a document left alone): the original takes B
from a random other document and labels it 1, even for SOP, which mixes NSP
negatives into SOP (about 53% label 1 on real text).
`single_segment="random_document"` (the default for SOP) reproduces that
rule exactly. `single_segment="split"` (ours; always for none) fixes it: the
segment is cut at a random word start into A and B and then treated like any
other pair (a one-token segment gives no example). NSP always keeps the
original behaviour.

The target length is drawn once per document and pass, before its first
chunk, as the original's `create_instances_from_document` does: with
probability short_seq_prob every sequence of that document in that pass gets
the same short target (docs/reference.md section 4).
"""

import dataclasses
from typing import List, Optional, Protocol, Sequence

import numpy as np

from albert.pretraining_data.data_config import PretrainingDataConfig


@dataclasses.dataclass(frozen=True)
class Document:
  """Token ids of one document's segments (sentences).

  Attributes:
    tokens: int32 [num_tokens], all segments concatenated.
    offsets: int64 [num_segments + 1]; segment s is
      tokens[offsets[s]:offsets[s + 1]], never empty.
  """

  tokens: np.ndarray
  offsets: np.ndarray

  @property
  def num_segments(self) -> int:
    return len(self.offsets) - 1

  @classmethod
  def from_lengths(cls, tokens, lengths) -> "Document":
    """From all tokens and each segment's length (the documents format)."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return cls(np.asarray(tokens, dtype=np.int32), offsets)


class RandomDocuments(Protocol):
  """Where a random B comes from (see document_pool.DocumentPool)."""

  def pick(self, rng: np.random.Generator, exclude: int) -> Document:
    """A random document other than the one keyed `exclude` (10 tries)."""
    ...


class BlockDocuments:
  """The documents of one block as `RandomDocuments`, keyed by index."""

  def __init__(self, documents: Sequence[Document]):
    self._documents = documents

  def pick(self, rng: np.random.Generator, exclude: int) -> Document:
    for _ in range(10):
      other = int(rng.integers(len(self._documents)))
      if other != exclude:
        break
    return self._documents[other]


@dataclasses.dataclass(frozen=True)
class Instance:
  """One pair before masking. `target_length` is the drawn target."""

  tokens_a: np.ndarray
  tokens_b: np.ndarray
  label: int
  target_length: int


def truncate_pair(
    a: np.ndarray, b: np.ndarray, max_num_tokens: int, rng: np.random.Generator
):
  """The original's truncation, without the token-by-token loop.

  The original removes one token at a time from the longer side (B on ties),
  from the front or the back with probability 1/2 each. The side of every
  step is fixed by the lengths: first |len(a) - len(b)| steps from the longer
  side, then B, A, B, A, ...; only the front/back coins are random.
  """
  excess = len(a) + len(b) - max_num_tokens
  if excess <= 0:
    return a, b
  from_front = rng.random(excess) < 0.5
  gap = min(excess, abs(len(a) - len(b)))
  from_a = np.empty(excess, dtype=bool)
  from_a[:gap] = len(a) > len(b)
  from_a[gap:] = np.arange(excess - gap) % 2 == 1
  a_front = int(np.count_nonzero(from_a & from_front))
  a_back = int(np.count_nonzero(from_a)) - a_front
  b_front = int(np.count_nonzero(~from_a & from_front))
  b_back = excess - a_front - a_back - b_front
  return a[a_front : len(a) - a_back], b[b_front : len(b) - b_back]


class InstanceBuilder:
  """Builds the pairs of one document (one pass of `dupe_factor`)."""

  def __init__(self, config: PretrainingDataConfig, is_word_start: np.ndarray):
    self._config = config
    self._is_word_start = is_word_start

  def _target_length(self, rng: np.random.Generator) -> int:
    max_num_tokens = self._config.max_num_tokens
    if rng.random() < self._config.short_seq_prob:
      return int(rng.integers(2, max_num_tokens + 1))
    return max_num_tokens

  def _split_segment(self, segment: np.ndarray, rng: np.random.Generator):
    """Cuts one segment at a random word start (else any piece)."""
    cuts = np.flatnonzero(self._is_word_start[segment[1:]]) + 1
    if not cuts.size:
      cuts = np.arange(1, len(segment))
    cut = int(cuts[rng.integers(len(cuts))])
    return segment[:cut], segment[cut:]

  @staticmethod
  def _random_b(
      doc: Document, target_b: int, rng: np.random.Generator
  ) -> np.ndarray:
    """Segments of `doc` from a random one on, up to target_b tokens."""
    first = int(rng.integers(doc.num_segments))
    base = doc.offsets[first]
    end = int(np.searchsorted(doc.offsets, base + target_b, side="left"))
    end = min(max(end, first + 1), doc.num_segments)
    return doc.tokens[base : doc.offsets[end]]

  def build(
      self,
      documents: Sequence[Document],
      doc_index: int,
      rng: np.random.Generator,
      random_documents: Optional[RandomDocuments] = None,
      key: Optional[int] = None,
  ) -> List[Instance]:
    """All pairs of documents[doc_index] in one pass.

    Args:
      documents: the block's documents.
      doc_index: which one.
      rng: this document's and pass's generator.
      random_documents: where random B come from (NSP, random_document);
        default: the other documents of `documents`.
      key: the document's key in `random_documents` (default: doc_index).
    """
    config = self._config
    task = config.sentence_task
    if random_documents is None:
      random_documents = BlockDocuments(documents)
    key = doc_index if key is None else key
    single_random = task == "sop" and config.single_segment == "random_document"
    doc = documents[doc_index]
    tokens, offsets = doc.tokens, doc.offsets
    instances = []
    target = self._target_length(rng)  # Once per document, as the original.
    chunk_start, i = 0, 0
    while i < doc.num_segments:
      if i + 1 < doc.num_segments and (
          offsets[i + 1] - offsets[chunk_start] < target
      ):
        i += 1
        continue
      count = i + 1 - chunk_start  # Segments in the chunk.
      a_end = int(rng.integers(1, count)) if count >= 2 else 1
      a = tokens[offsets[chunk_start] : offsets[chunk_start + a_end]]
      b = tokens[offsets[chunk_start + a_end] : offsets[i + 1]]
      label = 0
      if (task == "nsp" and (count == 1 or rng.random() < 0.5)) or (
          single_random and count == 1
      ):
        other = random_documents.pick(rng, key)
        b = self._random_b(other, target - len(a), rng)
        label = 1
        i -= count - a_end  # Put the unused segments back.
      else:
        if count == 1:
          a, b = self._split_segment(a, rng) if len(a) >= 2 else (a, b)
        if len(b) and task == "sop" and rng.random() < 0.5:
          a, b, label = b, a, 1
      if len(b):
        a, b = truncate_pair(a, b, config.max_num_tokens, rng)
        instances.append(Instance(a, b, label, target))
      chunk_start = i = i + 1
    return instances
