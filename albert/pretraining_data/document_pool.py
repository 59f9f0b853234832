"""`DocumentPool`: documents from the whole corpus to draw random B from.

The original reads the whole corpus into memory and draws the random document
of an NSP negative (and of a single-segment SOP chunk) from all of it. Here a
block is generated on its own, so the random documents come from a pool: a
seeded sample of `ceil(document_pool_size / blocks)` documents of every block
(all of a block's documents if it has fewer), kept as int32 token arrays.
Every document of the corpus is equally likely to be in the pool when blocks
hold similar numbers of documents, the pool spans the whole corpus, its memory
is bounded by `document_pool_size` documents, and it depends only on the
inputs, the options and the model.

A document is keyed `block index * 2**32 + index in the block`, so the draw
can skip the document being paired, as the original does.
"""

import dataclasses
import io
import math
from typing import List, Sequence, Tuple

import numpy as np

from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.instances import Document
from official.errors import InputError
from official.io import atomic_write

_POOL_SAMPLE = 4  # Seed purpose, beside block_generator's.


def document_key(block_index: int, doc_index: int) -> int:
  return (block_index << 32) | doc_index


@dataclasses.dataclass(frozen=True)
class DocumentPool:
  """Documents in one set of flat arrays.

  Attributes:
    tokens: int32, every document's tokens.
    offsets: int64 [segments + 1], segment starts in `tokens` (all documents).
    starts: int64 [documents + 1], each document's first segment.
    keys: int64 [documents], `document_key` of each document.
  """

  tokens: np.ndarray
  offsets: np.ndarray
  starts: np.ndarray
  keys: np.ndarray

  def __len__(self) -> int:
    return len(self.keys)

  def document(self, d: int) -> Document:
    first, last = self.starts[d], self.starts[d + 1]
    offsets = self.offsets[first : last + 1]
    return Document(self.tokens[offsets[0] : offsets[-1]], offsets - offsets[0])

  def pick(self, rng: np.random.Generator, exclude: int) -> Document:
    """A random document other than the one keyed `exclude` (10 tries)."""
    for _ in range(10):
      d = int(rng.integers(len(self.keys)))
      if self.keys[d] != exclude:
        break
    return self.document(d)

  @classmethod
  def from_documents(
      cls, documents: Sequence[Document], keys: Sequence[int]
  ) -> "DocumentPool":
    offsets, starts, tokens = [np.zeros(1, np.int64)], [0], []
    base, segments = 0, 0
    for doc in documents:
      tokens.append(doc.tokens)
      offsets.append(doc.offsets[1:] + base)
      base += len(doc.tokens)
      segments += doc.num_segments
      starts.append(segments)
    return cls(
        np.concatenate(tokens) if tokens else np.zeros(0, np.int32),
        np.concatenate(offsets),
        np.array(starts, dtype=np.int64),
        np.array(keys, dtype=np.int64),
    )

  @classmethod
  def concatenate(cls, pools: Sequence["DocumentPool"]) -> "DocumentPool":
    documents, keys = [], []
    for pool in pools:
      documents.extend(pool.document(d) for d in range(len(pool)))
      keys.extend(pool.keys.tolist())
    return cls.from_documents(documents, keys)

  def save(self, path: str) -> None:
    """Writes an .npz under a temporary name, renamed when complete."""
    buffer = io.BytesIO()
    np.savez(buffer, **dataclasses.asdict(self))
    atomic_write.write_atomic(path, buffer.getvalue())

  @classmethod
  def load(cls, path: str) -> "DocumentPool":
    with np.load(path) as arrays:
      return cls(**{f.name: arrays[f.name] for f in dataclasses.fields(cls)})


def documents_per_block(num_blocks: int, pool_size: int) -> int:
  return max(1, math.ceil(pool_size / max(1, num_blocks)))


def sample_block(
    documents: Sequence[Document],
    block_index: int,
    num_blocks: int,
    config: PretrainingDataConfig,
) -> DocumentPool:
  """The pool's share of one block: a seeded sample, in block order."""
  k = documents_per_block(num_blocks, config.document_pool_size)
  if len(documents) <= k:
    chosen: List[int] = list(range(len(documents)))
  else:
    rng = np.random.default_rng([config.random_seed, block_index, _POOL_SAMPLE])
    chosen = sorted(rng.choice(len(documents), k, replace=False).tolist())
  return DocumentPool.from_documents(
      [documents[d] for d in chosen],
      [document_key(block_index, d) for d in chosen],
  )


def merge(shares: Sequence[Tuple[int, DocumentPool]]) -> DocumentPool:
  """The pool from every block's (block index, share), in block order.

  Raises:
    InputError: fewer than 2 documents to draw from.
  """
  pool = DocumentPool.concatenate(
      [share for _, share in sorted(shares, key=lambda item: item[0])]
  )
  if not len(pool):
    raise InputError(
        "the corpus has no documents (it is empty or blank lines only): no "
        "examples to make; check --input_file"
    )
  if len(pool) < 2:
    raise InputError(
        f"the corpus has {len(pool)} document(s); random documents "
        "(--sentence_task=nsp, --single_segment=random_document) need 2"
    )
  return pool
