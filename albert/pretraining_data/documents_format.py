"""The `documents` output format: each document once, paired and masked later.

`create_pretraining_data --output_format=documents` writes every document
of the corpus once (dupe 1), already tokenized, and the trainer makes the
pairs and masks as it reads them (`albert.pretraining.documents_data`, with
`dynamic_masking`), new ones every epoch. A record is a `tf.train.Example`
of int64 lists:

  token_ids        the document's token ids, its segments (lines) in order
  segment_lengths  tokens of each segment (they sum to len(token_ids))
  document_id      [1] the document's key, `document_pool.document_key`
                   (block index * 2**32 + index in the block): with the
                   seed and the epoch, what its pairs and masks depend on

Word starts, which whole-word masking and the single-segment split need, are
a function of the token id (the tokenizer's `is_word_start` table), so the
manifest keeps the table once (`vocabulary_entry`), with the special ids and
the pieces a random replacement may be, instead of a flag per token.

A document of fewer than 2 tokens gives no pair in either format; here it is
left out, counted (`BlockStats.short_documents`, the manifest's
`num_short_documents`) and reported, and a reader that meets one in a shard
stops with an error.

Records are scattered to shards with random places as examples are
(global_shuffle), so every shard is a uniform random sample of the documents
in random order. The random-document pool (NSP, random_document) is sampled
from every block in the same pass and written beside the manifest
(`RANDOM_DOCUMENTS_FILE`), so a reader may choose any sentence task; when
it would hold every document (a corpus of at most `document_pool_size`
documents) the manifest says `POOL_FROM_SHARDS` and the reader takes the
documents from the shards instead of a second copy on disk.
"""

import base64
import dataclasses
from typing import Dict, Iterator, List, Sequence

import numpy as np

from albert.pretraining_data.block_generator import BlockStats
from albert.pretraining_data.block_generator import Example
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.document_pool import document_key
from albert.pretraining_data.example_proto import serialize_int64_example
from albert.pretraining_data.instances import Document

FORMAT = "albert_pretraining_documents"
FEATURES = ("token_ids", "segment_lengths", "document_id")
MIN_TOKENS = 2
RANDOM_DOCUMENTS_FILE = "random_documents.npz"
# The manifest's "random_documents" when the pool is every document.
POOL_FROM_SHARDS = "shards"
_SCATTER = 3  # block_generator's purpose: the same scatter keys.


@dataclasses.dataclass(frozen=True)
class Vocabulary:
  """What pairing and masking need of a tokenizer (duck-types it for
  `InstanceBuilder` and `ExampleEncoder`)."""

  is_word_start: np.ndarray  # bool [vocab_size]
  cls_id: int
  sep_id: int
  mask_id: int
  replacement_ids: np.ndarray  # int32: pieces a random replacement may be


def vocabulary_entry(tokenizer) -> Dict:
  """The manifest's "vocabulary": the tokenizer's tables, JSON-ready."""
  size = len(tokenizer.is_word_start)
  excluded = np.setdiff1d(np.arange(size), tokenizer.replacement_ids)
  return {
      "vocab_size": size,
      "cls_id": int(tokenizer.cls_id),
      "sep_id": int(tokenizer.sep_id),
      "mask_id": int(tokenizer.mask_id),
      "word_start_bits": base64.b64encode(
          np.packbits(np.asarray(tokenizer.is_word_start, dtype=bool))
      ).decode("ascii"),
      "not_replacement_ids": excluded.tolist(),
  }


def vocabulary_from_entry(entry: Dict) -> Vocabulary:
  """The inverse of `vocabulary_entry`; KeyError/ValueError if damaged."""
  size = int(entry["vocab_size"])
  bits = np.frombuffer(base64.b64decode(entry["word_start_bits"]), np.uint8)
  is_word_start = np.unpackbits(bits)[:size].astype(bool)
  if len(is_word_start) != size:
    raise ValueError(f"word_start_bits holds fewer than {size} flags")
  replacement = np.setdiff1d(
      np.arange(size), np.asarray(entry["not_replacement_ids"], np.int64)
  ).astype(np.int32)
  return Vocabulary(
      is_word_start,
      int(entry["cls_id"]),
      int(entry["sep_id"]),
      int(entry["mask_id"]),
      replacement,
  )


def serialize_document(document: Document, key: int) -> bytes:
  return serialize_int64_example(
      {
          "token_ids": document.tokens,
          "segment_lengths": np.diff(document.offsets),
          "document_id": np.array([key], dtype=np.int64),
      }
  )


def document_examples(
    documents: Sequence[Document],
    block_index: int,
    config: PretrainingDataConfig,
    stats: BlockStats,
    num_shards: int = 1,
) -> Iterator[Example]:
  """Yields one record per document of a block (of at least MIN_TOKENS
  tokens), scattered to shards; updates `stats` (examples = documents
  written, example_tokens = their tokens)."""
  stats.documents += len(documents)
  stats.segments += sum(d.num_segments for d in documents)
  stats.input_tokens += sum(len(d.tokens) for d in documents)
  keys = np.random.default_rng(
      [config.random_seed, block_index, _SCATTER, 0]
  ).bit_generator
  for doc_index, document in enumerate(documents):
    if len(document.tokens) < MIN_TOKENS:
      stats.short_documents += 1
      continue
    doc_key = document_key(block_index, doc_index)
    stats.examples += 1
    stats.example_tokens += len(document.tokens)
    key = int(keys.random_raw())
    yield Example(
        key % num_shards,
        key // num_shards,
        serialize_document(document, doc_key),
        doc_key,
        len(document.tokens),
    )


def feature_schema() -> List[Dict]:
  return [{"name": name, "dtype": "int64", "length": None} for name in FEATURES]
