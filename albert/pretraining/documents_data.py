"""`documents_dataset`: documents-format shards -> batches, masked as read.

Shards of `create_pretraining_data --output_format=documents` hold each
document once; this pipeline pairs (`pairing_ops.PairingOps`) and masks
(`masking_ops.MaskingOps`) them inside `tf.data`, in TensorFlow ops only: it
runs on every core of the host, and where the input pipeline has no Python
(a TPU host, a tf.data service worker). It gives new pairs and masks every
epoch, by the offline generator's rules (`pretraining_data.instances`,
`masking`, which the tests compare it with), and the same batches as
`data.pretraining_dataset`.

Order, as the examples reader (`official.core.seekable_stream`): every
epoch the file list is shuffled (seeded by the seed and the epoch), groups
of `cycle_length` files are read interleaved, each window of
`documents_per_window` documents is paired at once (windows in parallel, in
order), and the window's pairs are shuffled together, then batched and
masked.

What a pair and its masks are depends only on the seed, the epoch and the
document (a counter-based hash of them, see masking_ops), so any number of
input pipelines or hosts gives the same examples. A resumed run starts at
the checkpoint's stream position: it re-reads at most one group of raw
documents and pairs one window, whatever the step.

Options come from the data's manifest ("flags", "vocabulary"): the
sequence length, masked positions and sentence task are the run's
(`PretrainTask`), so one documents dataset serves any of them; the rest
(masked_lm_prob, short_seq_prob, ngram, whole-word masking, the
single-segment rule) are what was given to create_pretraining_data.
"""

import dataclasses
import json
import os
from typing import List, Optional

from absl import logging
import tensorflow as tf

from albert.pretraining import data
from albert.pretraining import masking_ops
from albert.pretraining.masking_ops import MaskingOps
from albert.pretraining.pairing_ops import PairingOps
from albert.pretraining_data import documents_format
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.document_pool import DocumentPool
from albert.pretraining_data.instances import Document
from official.core.input_pipeline import resumable_batches
from official.core.seekable_stream import StreamPosition
from official.errors import InputError

# Documents paired together, whose pairs are shuffled together (a window
# of `seekable_stream`), by default.
DOCUMENTS_PER_WINDOW = 256
# Streams of draws: a document's pairs, a pair's masks.
_PAIRS, _MASKS = 11, 12
# Options of the manifest's flags that the run may not change between
# directories read together.
_PAIRING_OPTIONS = (
    "masked_lm_prob",
    "short_seq_prob",
    "ngram",
    "favor_shorter_ngram",
    "do_whole_word_mask",
    "single_segment",
)
DOCUMENT_SPEC = {
    "token_ids": tf.io.RaggedFeature(tf.int64),
    "segment_lengths": tf.io.RaggedFeature(tf.int64),
    "document_id": tf.io.FixedLenFeature([1], tf.int64),
}


@dataclasses.dataclass
class DocumentsData:
  """The manifests of a documents dataset, read and checked.

  Attributes:
    files: the shards, sorted.
    manifests: (path, manifest) of every shard directory.
    flags: the first manifest's generation options.
    vocabulary: the data's tables.
    compression: "GZIP" or None.
  """

  files: List[str]
  manifests: list
  flags: dict
  vocabulary: documents_format.Vocabulary
  compression: Optional[str]

  def config(
      self, seq_length: int, max_predictions_per_seq: int, sentence_task: str
  ) -> PretrainingDataConfig:
    """The pairing and masking options of a run."""
    flags = dict(self.flags)
    single = flags.get("single_segment")
    if sentence_task == "none" and single == "random_document":
      single = None  # The rule of "none" (split).
    flags.update(
        max_seq_length=seq_length,
        max_predictions_per_seq=max_predictions_per_seq,
        sentence_task=sentence_task,
        single_segment=single,
        output_format="examples",
        dupe_factor=1,
    )
    return PretrainingDataConfig(**flags)

  def pool(self) -> DocumentPool:
    """Random documents: every manifest's pool file, or the documents of
    its shards where the pool is all of them."""
    pools = []
    for path, manifest in self.manifests:
      where = manifest.get("random_documents")
      directory = os.path.dirname(path)
      if where == documents_format.POOL_FROM_SHARDS:
        pools.append(_read_documents(self._files_in(directory)))
      elif where:
        local = os.path.join(directory, where)
        with tf.io.gfile.GFile(local, "rb") as f:
          pools.append(DocumentPool.load(f))
      else:
        raise InputError(
            f"{path}: the corpus has fewer than 2 documents, so it has no "
            "random documents for --sentence_task=nsp or the random_document "
            "rule: use PretrainTask.sentence_task='none' or more text"
        )
    return DocumentPool.concatenate(pools) if len(pools) > 1 else pools[0]

  def _files_in(self, directory: str) -> List[str]:
    return [f for f in self.files if os.path.dirname(f) == directory]


def read_documents_data(file_pattern: str, what: str) -> DocumentsData:
  """Matches the shards and reads their manifests, one line on error.

  Raises:
    InputError: no manifest, a manifest of the examples format, manifests of
      two vocabularies or pairing options, or a damaged manifest.
  """
  files = data.match_files(file_pattern, what=what)
  manifests = []
  for directory in sorted({os.path.dirname(f) for f in files}):
    path = os.path.join(directory, "manifest.json")
    if not tf.io.gfile.exists(path):
      raise InputError(
          f"{directory}: no manifest.json beside the shards of {what}; "
          "documents data is read with its manifest: make it with "
          "tools/create_pretraining_data.py --output_format=documents"
      )
    try:
      with tf.io.gfile.GFile(path) as f:
        manifest = json.load(f)
    except ValueError as e:
      raise InputError(f"{path}: not a JSON manifest ({e})") from e
    if manifest.get("format") != documents_format.FORMAT:
      raise InputError(
          f"{path}: the shards hold examples "
          f"({manifest.get('format', 'no format')}), not documents: set "
          "PretrainTask.input_format='examples' to read them, or make the "
          "data with --output_format=documents"
      )
    manifests.append((path, manifest))
  first_path, first = manifests[0]
  for path, manifest in manifests[1:]:
    if manifest["tokenizer"]["sha256"] != first["tokenizer"]["sha256"]:
      raise InputError(
          f"{path}: made with another vocabulary "
          f"({manifest['tokenizer'].get('path')}) than {first_path} "
          f"({first['tokenizer'].get('path')}); read data of one vocabulary"
      )
    for option in _PAIRING_OPTIONS:
      if manifest["flags"].get(option) != first["flags"].get(option):
        raise InputError(
            f"{path}: {option}={manifest['flags'].get(option)} but "
            f"{first_path} has {first['flags'].get(option)}; read data made "
            "with one set of pairing and masking options"
        )
  try:
    vocabulary = documents_format.vocabulary_from_entry(first["vocabulary"])
  except (KeyError, ValueError, TypeError) as e:
    raise InputError(f"{first_path}: damaged vocabulary entry ({e})") from e
  return DocumentsData(
      files,
      manifests,
      first["flags"],
      vocabulary,
      data.compression_of(files),
  )


def _read_documents(files: List[str]) -> DocumentPool:
  """Every document of some shards, as a pool (small corpora only)."""
  documents, keys = [], []
  dataset = tf.data.TFRecordDataset(
      files, compression_type=data.compression_of(files)
  )
  for batch in dataset.batch(1024):
    parsed = tf.io.parse_example(batch, DOCUMENT_SPEC)
    for tokens, lengths, key in zip(
        parsed["token_ids"].numpy(),
        parsed["segment_lengths"].numpy(),
        parsed["document_id"][:, 0].numpy(),
    ):
      documents.append(Document.from_lengths(tokens, lengths))
      keys.append(int(key))
  return DocumentPool.from_documents(documents, keys)


def check_first_record(files: List[str], compression) -> None:
  """The first record is a document (else one line naming the file)."""
  for raw in tf.data.TFRecordDataset(
      files[:1], compression_type=compression
  ).take(1):
    example = tf.train.Example.FromString(raw.numpy())
    names = set(example.features.feature)
    if not set(documents_format.FEATURES) <= names:
      raise InputError(
          f"{files[0]}: not a documents record (features "
          f"{', '.join(sorted(names)) or 'none'}): set "
          "PretrainTask.input_format='examples' for examples shards"
      )
    return
  raise InputError(f"{files[0]} holds no records")


def documents_dataset(
    file_pattern: str,
    *,
    seq_length: int,
    max_predictions_per_seq: int,
    sentence_task: str,
    batch_size: int,
    training: bool,
    input_context: Optional[tf.distribute.InputContext] = None,
    seed: int = 0,
    masking_seed: Optional[int] = None,
    skip_examples: int = 0,
    documents_per_window: int = DOCUMENTS_PER_WINDOW,
    cycle_length: Optional[int] = None,
    vocab_size: Optional[int] = None,
    start: Optional[StreamPosition] = None,
) -> tf.data.Dataset:
  """Batches of model inputs from documents shards, paired and masked here.

  Args (as `data.pretraining_dataset`, and):
    sentence_task: "sop", "nsp" or "none".
    seed: the file and window shuffles' seed, and the masks' when
      masking_seed is None: then every epoch gets new pairs and masks.
    masking_seed: pins the pairs and masks: the same every epoch.
    documents_per_window: documents paired at once; their pairs are
      shuffled together.
  """
  source = read_documents_data(file_pattern, "PretrainTask data")
  config = source.config(seq_length, max_predictions_per_seq, sentence_task)
  pool = source.pool() if config.uses_random_documents else None
  pairing = PairingOps(
      seq_length=seq_length,
      short_seq_prob=config.short_seq_prob,
      sentence_task=config.sentence_task,
      single_segment=config.single_segment,
      is_word_start=source.vocabulary.is_word_start,
      cls_id=source.vocabulary.cls_id,
      sep_id=source.vocabulary.sep_id,
      pool=pool,
  )
  # The pairs' and masks' seed; pinned: the same every epoch.
  pair_seed = seed if masking_seed is None else masking_seed

  def epoch_key(epoch):
    return epoch if masking_seed is None else tf.zeros_like(epoch)

  reading = data.PipelineFiles.of(source.files, input_context, cycle_length)
  logging.info(
      "Pairing and masking %d documents files as read (%d interleaved, "
      "seq %d, %d predictions, %s, %s masks)",
      len(reading.files),
      reading.cycle,
      seq_length,
      max_predictions_per_seq,
      sentence_task,
      "pinned" if masking_seed is not None else "per-epoch",
  )

  def pair(records, epoch):
    # A document's pairs: (seed, epoch, document) only.
    parsed = tf.io.parse_example(records, DOCUMENT_SPEC)
    document_ids = parsed["document_id"][:, 0]
    epochs = tf.fill(tf.shape(document_ids), epoch)
    keys = masking_ops.row_keys(
        pair_seed,
        epoch_key(epochs),
        tf.fill(tf.shape(epochs), tf.constant(_PAIRS, tf.int64)),
        document_ids,
    )
    pairs = pairing(
        parsed["token_ids"], parsed["segment_lengths"], document_ids, keys
    )
    row = pairs.pop("row")
    pairs["epoch"] = tf.gather(epochs, row)
    pairs["document"] = tf.gather(document_ids, row)
    return pairs

  pairs = reading.stream(
      source.compression,
      window_size=documents_per_window,
      expand=pair,
      training=training,
      seed=seed,
      start=start,
  )
  masking = MaskingOps(
      is_word_start=source.vocabulary.is_word_start,
      mask_id=source.vocabulary.mask_id,
      replacement_ids=source.vocabulary.replacement_ids,
      masked_lm_prob=config.masked_lm_prob,
      max_predictions_per_seq=config.max_predictions_per_seq,
      ngram=config.ngram,
      favor_shorter_ngram=config.favor_shorter_ngram,
      do_whole_word_mask=config.do_whole_word_mask,
      seq_length=seq_length,
  )

  def mask(batch):
    # A pair's masks: (seed, epoch, document, its index there) only.
    epoch = epoch_key(batch["epoch"])
    keys = masking_ops.row_keys(
        pair_seed,
        epoch,
        tf.fill(tf.shape(epoch), tf.constant(_MASKS, tf.int64)),
        batch["document"],
        batch["index"],
    )
    record = masking(
        batch["ids"], batch["len_a"], batch["length"], batch["label"], keys
    )
    return data.model_batch(record, vocab_size)

  return resumable_batches(
      pairs,
      parse=mask,
      batch_size=batch_size,
      training=training,
      skip_examples=skip_examples,
  )
