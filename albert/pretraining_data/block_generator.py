"""`generate_block`: one block of the corpus -> serialized pretraining examples.

Reproducibility: every draw comes from a numpy Generator seeded by
(random_seed, block index, purpose, document index, pass), so a block's
examples depend only on the inputs, the config and the model, never on which
process runs it or on what ran before.

Global shuffle: every example also gets a 64-bit random key from the
generator of its block and pass; key mod num_shards is its output shard, and
key div num_shards its place there: each shard holds its examples sorted by
that number (see global_shuffle). Independent uniform keys make every shard a
uniform random sample of the whole job's examples in uniformly random order,
as if the whole output had been shuffled at once.

Memory: a block's documents are encoded once and kept as int32 arrays for all
`dupe_factor` passes; examples stream out as they are made. So memory is
bounded by the block size, whatever the corpus size or dupe_factor.
"""

import dataclasses
import itertools
from typing import Callable, Dict, Iterable, Iterator, List, NamedTuple
from typing import Optional

import numpy as np

from albert.pretraining_data import corpus_reader
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.example_proto import serialize_example
from albert.pretraining_data.document_pool import document_key
from albert.pretraining_data.document_pool import DocumentPool
from albert.pretraining_data.instances import Document, Instance
from albert.pretraining_data.instances import InstanceBuilder
from albert.pretraining_data.masking import NgramMasker
from albert.text.tokenizers import Tokenizer

# Purposes of the per-block generators (domain separation of the seeds; 2
# was a per-pass order, 4 is document_pool's sample).
_PAIRS_AND_MASKS = 1
_SCATTER = 3


class Example(NamedTuple):
  """One serialized example and where it goes.

  Attributes:
    shard: output shard (key mod num_shards).
    order: its place in the shard: shards are sorted by it (key div
      num_shards, uniform in [0, 2**64 / num_shards)).
    record: the serialized tf.train.Example.
    document: `document_key` of the document it comes from.
    tokens: non-padding tokens, with [CLS] and [SEP].
  """

  shard: int
  order: int
  record: bytes
  document: int
  tokens: int


@dataclasses.dataclass
class BlockStats:
  """Counts of one block (summed for shards and the manifest)."""

  documents: int = 0
  segments: int = 0
  input_tokens: int = 0
  examples: int = 0
  example_tokens: int = 0  # Non-padding tokens, with [CLS] and [SEP].
  masked_positions: int = 0
  sentence_label_1: int = 0
  # Documents of fewer than 2 tokens (the documents format counts them).
  short_documents: int = 0

  def add(self, other: "BlockStats") -> "BlockStats":
    for field in dataclasses.fields(self):
      setattr(
          self,
          field.name,
          getattr(self, field.name) + getattr(other, field.name),
      )
    return self

  def to_dict(self) -> Dict[str, int]:
    return dataclasses.asdict(self)


def tokenize_documents(
    raw_documents: Iterable[List[str]], tokenizer: Tokenizer
) -> List[Document]:
  """Normalises and encodes documents; drops lines and documents left empty.

  A line that normalises to nothing ends a document, as in the original.
  """
  texts, marks = [], []  # marks[k]: line k starts a new document.
  for raw in raw_documents:
    new_doc = True
    for line in raw:
      text = tokenizer.normalize(line)
      if not text:
        new_doc = True
        continue
      texts.append(text)
      marks.append(new_doc)
      new_doc = False
  documents, segments = [], []
  for ids, new_doc in zip(tokenizer.encode_lines(texts), marks):
    if new_doc and segments:
      documents.append(_document(segments))
      segments = []
    if ids:
      segments.append(ids)
  if segments:
    documents.append(_document(segments))
  return documents


def _document(segments: List[List[int]]) -> Document:
  offsets = np.zeros(len(segments) + 1, dtype=np.int64)
  np.cumsum([len(s) for s in segments], out=offsets[1:])
  tokens = np.array(
      list(itertools.chain.from_iterable(segments)), dtype=np.int32
  )
  return Document(tokens, offsets)


class ExampleEncoder:
  """Instance -> masked, padded, serialized Example."""

  def __init__(self, config: PretrainingDataConfig, tokenizer: Tokenizer):
    self._config = config
    self._tokenizer = tokenizer
    self.masker = NgramMasker(
        is_word_start=tokenizer.is_word_start,
        mask_id=tokenizer.mask_id,
        replacement_ids=tokenizer.replacement_ids,
        masked_lm_prob=config.masked_lm_prob,
        max_predictions_per_seq=config.max_predictions_per_seq,
        ngram=config.ngram,
        favor_shorter_ngram=config.favor_shorter_ngram,
        do_whole_word_mask=config.do_whole_word_mask,
    )

  def pair_ids(self, instance: Instance, width: int) -> np.ndarray:
    """`[CLS] A [SEP] B [SEP]` padded with 0 to `width` (int32)."""
    tok = self._tokenizer
    len_a, len_b = len(instance.tokens_a), len(instance.tokens_b)
    length = len_a + len_b + 3
    ids = np.zeros(width, dtype=np.int32)
    ids[0] = tok.cls_id
    ids[1 : len_a + 1] = instance.tokens_a
    ids[len_a + 1] = tok.sep_id
    ids[len_a + 2 : length - 1] = instance.tokens_b
    ids[length - 1] = tok.sep_id
    return ids

  def arrays(
      self,
      instance: Instance,
      rng: np.random.Generator,
      ngram_counts: Optional[List[int]] = None,
  ) -> Dict[str, np.ndarray]:
    """The record's features as padded arrays (record names)."""
    seq_len = self._config.max_seq_length
    max_pred = self._config.max_predictions_per_seq
    tok = self._tokenizer
    len_a = len(instance.tokens_a)
    ids = self.pair_ids(instance, len(instance.tokens_b) + len_a + 3)
    length = len(ids)
    special = np.zeros(length, dtype=bool)
    special[[0, len_a + 1, length - 1]] = True
    masked, positions, labels = self.masker.mask(
        ids, special, rng, ngram_counts
    )
    input_ids = np.zeros(seq_len, dtype=np.int32)
    input_ids[:length] = masked
    input_mask = np.zeros(seq_len, dtype=np.uint8)
    input_mask[:length] = 1
    segment_ids = np.zeros(seq_len, dtype=np.uint8)
    segment_ids[len_a + 2 : length] = 1
    boundary = np.zeros(seq_len, dtype=np.uint8)
    boundary[:length] = tok.is_word_start[ids] | special
    k = len(positions)
    lm_positions = np.zeros(max_pred, dtype=np.int64)
    lm_positions[:k] = positions
    lm_ids = np.zeros(max_pred, dtype=np.int32)
    lm_ids[:k] = labels
    lm_weights = np.zeros(max_pred, dtype=np.float32)
    lm_weights[:k] = 1.0
    return {
        "input_ids": input_ids,
        "input_mask": input_mask,
        "segment_ids": segment_ids,
        "token_boundary": boundary,
        "masked_lm_positions": lm_positions,
        "masked_lm_ids": lm_ids,
        "masked_lm_weights": lm_weights,
        "next_sentence_labels": np.array([instance.label], dtype=np.uint8),
    }


def _rng(config: PretrainingDataConfig, *key: int) -> np.random.Generator:
  return np.random.default_rng([config.random_seed, *key])


def pass_groups(
    num_blocks: int, dupe_factor: int, min_tasks: int = 16
) -> List[range]:
  """Splits the passes over each block into contiguous groups.

  A small corpus has few blocks; running groups of passes as separate tasks
  keeps every core busy (each task encodes its block again). Any split gives
  the same bytes, since every pass has its own seeds and shuffle; this one
  depends on the plan only, so a rerun reuses the finished tasks.
  """
  groups = min(dupe_factor, max(1, -(-min_tasks // max(1, num_blocks))))
  bounds = [dupe_factor * g // groups for g in range(groups + 1)]
  return [range(a, b) for a, b in zip(bounds[:-1], bounds[1:])]


def block_documents(
    block: corpus_reader.Block,
    tokenizer: Tokenizer,
    config: PretrainingDataConfig,
    opener: Optional[Callable] = None,
) -> List[Document]:
  """The encoded documents of `block`.

  Raises:
    InputError: the block has a line that is not valid UTF-8.
  """
  raw = corpus_reader.read_documents(block, config.block_bytes, opener)
  return tokenize_documents(raw, tokenizer)


def generate_block(
    block: corpus_reader.Block,
    tokenizer: Tokenizer,
    config: PretrainingDataConfig,
    stats: BlockStats,
    passes: Optional[range] = None,
    opener: Optional[Callable] = None,
    num_shards: int = 1,
    pool: Optional[DocumentPool] = None,
) -> Iterator[Example]:
  """Yields the examples of `block`, updating `stats`.

  Args:
    block: the byte range to read.
    tokenizer: the SentencePiece model and its tables.
    config: the generation options.
    stats: counts to update (documents only by the group with pass 0).
    passes: which of the dupe_factor passes to run (default: all), in order.
    opener: path -> binary file object (default: local files).
    num_shards: output shards to scatter the examples to.
    pool: random documents (required if config.uses_random_documents).

  Raises:
    InputError: the block has a line that is not valid UTF-8.
  """
  if config.uses_random_documents and pool is None:
    raise ValueError("this config draws random documents: pass the pool")
  passes = range(config.dupe_factor) if passes is None else passes
  documents = block_documents(block, tokenizer, config, opener)
  if 0 in passes:
    stats.documents += len(documents)
    stats.segments += sum(d.num_segments for d in documents)
    stats.input_tokens += sum(len(d.tokens) for d in documents)
  builder = InstanceBuilder(config, tokenizer.is_word_start)
  encoder = ExampleEncoder(config, tokenizer)
  for dupe in passes:
    keys = _rng(config, block.index, _SCATTER, dupe).bit_generator
    for doc_index in range(len(documents)):
      rng = _rng(config, block.index, _PAIRS_AND_MASKS, doc_index, dupe)
      doc_key = document_key(block.index, doc_index)
      for instance in builder.build(
          documents, doc_index, rng, random_documents=pool, key=doc_key
      ):
        arrays = encoder.arrays(instance, rng)
        tokens = len(instance.tokens_a) + len(instance.tokens_b) + 3
        stats.examples += 1
        stats.example_tokens += tokens
        stats.masked_positions += int(arrays["masked_lm_weights"].sum())
        stats.sentence_label_1 += instance.label
        key = int(keys.random_raw())
        yield Example(
            key % num_shards,
            key // num_shards,
            serialize_example(arrays),
            doc_key,
            tokens,
        )
