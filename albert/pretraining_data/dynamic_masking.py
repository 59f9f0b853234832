"""`DynamicExamples`: pairs and masks of documents-format records, as read.

The same code as the offline generator (`InstanceBuilder` for the pairs,
`ExampleEncoder` / `NgramMasker` for the masks), so every rule and statistic
is the offline path's: segments A/B and the short-sequence target, SOP / NSP
/ none, the single-segment rule, whole-word n-grams with p(n) ~ 1/n, 80/10/10
and the `max_predictions_per_seq` budget.

Two stages, so that a resumed run skips examples cheaply: `pairs` makes the
unmasked pairs of a batch of documents (before the trainer's shuffle buffer),
`mask` masks a batch of pairs (after it, and after the skip of a resume).

Determinism: a document's pairs come from a generator seeded by (seed,
epoch, PAIRS, document id) and the masks of its i-th pair from (seed, epoch,
MASKS, document id, i). So they depend on the seed, the epoch and the
document only, never on the number of input pipelines, hosts or threads, nor
on the order the documents are read in. With `pinned=True` the epoch is
left out: every epoch gets the same pairs and masks (static masking, dupe 1).
"""

from typing import Dict, Optional, Tuple

import numpy as np

from albert import features
from albert.pretraining_data.block_generator import ExampleEncoder
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.document_pool import DocumentPool
from albert.pretraining_data.documents_format import MIN_TOKENS
from albert.pretraining_data.documents_format import Vocabulary
from albert.pretraining_data.instances import Document
from albert.pretraining_data.instances import Instance
from albert.pretraining_data.instances import InstanceBuilder

# Seed purposes (domain separation).
_PAIRS = 11
_MASKS = 12

SHORT_DOCUMENT_ERROR = "documents shard holds a document of fewer than"

# The pair stage's outputs, in order (see `pairs`).
PAIR_FIELDS = ("ids", "len_a", "length", "label", "epoch", "document", "index")


class DynamicExamples:
  """Pairs and masks documents with one config, vocabulary and seed.

  Args:
    config: the pairing and masking options (max_seq_length,
      max_predictions_per_seq, sentence_task, single_segment, masked_lm_prob,
      short_seq_prob, ngram, ...); random_seed and dupe_factor are unused.
    vocabulary: the data's special ids, word starts and replacement pieces.
    pool: random documents (required when the config draws them: NSP or
      the random_document rule).
    seed: seeds every draw.
    pinned: the same pairs and masks every epoch.
  """

  def __init__(
      self,
      config: PretrainingDataConfig,
      vocabulary: Vocabulary,
      pool: Optional[DocumentPool],
      seed: int,
      pinned: bool = False,
  ):
    if config.uses_random_documents and pool is None:
      raise ValueError("this config draws random documents: pass the pool")
    self.config = config
    self._vocabulary = vocabulary
    self._pool = pool
    self._seed = int(seed)
    self._pinned = pinned
    self._builder = InstanceBuilder(config, vocabulary.is_word_start)
    self._encoder = ExampleEncoder(config, vocabulary)

  def _epoch_key(self, epoch: int) -> int:
    return 0 if self._pinned else int(epoch)

  def document_pairs(
      self, epoch: int, document_id: int, document: Document
  ) -> list:
    """The unmasked pairs (`Instance`s) of one document in one epoch."""
    if len(document.tokens) < MIN_TOKENS:
      raise ValueError(
          f"{SHORT_DOCUMENT_ERROR} {MIN_TOKENS} tokens (document_id "
          f"{document_id}: {len(document.tokens)}); it was not made by "
          "create_pretraining_data --output_format=documents: make it again"
      )
    rng = np.random.default_rng(
        [self._seed, self._epoch_key(epoch), _PAIRS, int(document_id)]
    )
    return self._builder.build(
        [document], 0, rng, random_documents=self._pool, key=int(document_id)
    )

  def pairs(
      self,
      epochs: np.ndarray,
      document_ids: np.ndarray,
      tokens: np.ndarray,
      token_splits: np.ndarray,
      segment_lengths: np.ndarray,
      segment_splits: np.ndarray,
  ) -> Tuple[np.ndarray, ...]:
    """The pairs of a batch of documents (ragged, as flat values + splits).

    Returns:
      PAIR_FIELDS: ids int32 [k, max_seq_length] (`[CLS] A [SEP] B [SEP]`,
      unmasked, padded with 0), len_a, length, label (int32 [k]), epoch,
      document (int64 [k]) and index (int32 [k], the pair's place in its
      document).
    """
    seq_len = self.config.max_seq_length
    rows, fields = [], []
    for d in range(len(document_ids)):
      lengths = segment_lengths[segment_splits[d] : segment_splits[d + 1]]
      document = Document.from_lengths(
          tokens[token_splits[d] : token_splits[d + 1]], lengths
      )
      if document.offsets[-1] != len(document.tokens) or (lengths <= 0).any():
        raise ValueError(
            f"document_id {int(document_ids[d])}: segment_lengths do not "
            "add up to its token_ids; the shard is damaged: make it again"
        )
      for i, pair in enumerate(
          self.document_pairs(int(epochs[d]), int(document_ids[d]), document)
      ):
        len_a = len(pair.tokens_a)
        length = len_a + len(pair.tokens_b) + 3
        rows.append(self._encoder.pair_ids(pair, seq_len))
        fields.append(
            (len_a, length, pair.label, epochs[d], document_ids[d], i)
        )
    ids = np.stack(rows) if rows else np.zeros((0, seq_len), np.int32)
    columns = np.array(fields, dtype=np.int64).reshape(-1, 6).T
    len_a, length, label, epoch, document, index = columns
    i32 = np.int32
    return (
        ids,
        len_a.astype(i32),
        length.astype(i32),
        label.astype(i32),
        epoch,
        document,
        index.astype(i32),
    )

  def mask(
      self,
      ids: np.ndarray,
      len_a: np.ndarray,
      length: np.ndarray,
      label: np.ndarray,
      epoch: np.ndarray,
      document: np.ndarray,
      index: np.ndarray,
  ) -> Dict[str, np.ndarray]:
    """Masks a batch of pairs; returns the record features, batched (the
    examples format's names and shapes; next_sentence_labels [B, 1])."""
    out = {f.record_name: [] for f in features.PRETRAINING_FEATURES}
    for r in range(len(ids)):
      la, n = int(len_a[r]), int(length[r])
      pair = Instance(ids[r, 1 : la + 1], ids[r, la + 2 : n - 1], label[r], 0)
      rng = np.random.default_rng(
          [
              self._seed,
              self._epoch_key(epoch[r]),
              _MASKS,
              int(document[r]),
              int(index[r]),
          ]
      )
      for name, value in self._encoder.arrays(pair, rng).items():
        out[name].append(value)
    lengths = features.feature_lengths(
        self.config.max_seq_length, self.config.max_predictions_per_seq
    )
    return {
        f.record_name: (
            np.stack(out[f.record_name])
            if out[f.record_name]
            else np.zeros((0, lengths[f.record_name]))
        ).astype(np.float32 if f.dtype == "float32" else np.int32)
        for f in features.PRETRAINING_FEATURES
    }
