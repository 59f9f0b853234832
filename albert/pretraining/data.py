"""`pretraining_dataset`: TFRecord shards -> batches of model inputs.

Reads the original ALBERT record schema (`albert/features.py`), so files from
`tools/create_pretraining_data.py` and from the original release both work.

Training order, after the original's `input_fn_builder` (run_pretraining.py):
the file list is shuffled (again every epoch), `cycle_length` files are read
interleaved, one record from each in turn (default min(cores, files), the
original's min(num_cpu_threads, files)), and the records are shuffled. Here
the files go in groups of `cycle_length` (the next group opens when one is
read), and each window of `shuffle_buffer_size` records of a group is
shuffled as a whole (the original: a buffer of 100): that order can be
seeked (`official.core.seekable_stream`). The files of
`tools/create_pretraining_data.py` are each a uniform random sample of the
whole dataset in random order, so this is only a light extra mixing; files
from tools that write documents in order need a larger window.

Resuming: each training batch carries its stream position; a resumed run
starts at the checkpoint's, re-reading at most one group of raw records and
one window, whatever the step. Resume with the same files, seed, window and
cycle length: the default cycle length follows the core count (logged at
start), so on a machine with fewer cores than files, set it explicitly
(`PretrainTask.cycle_length`) to the logged value to resume bit-exact
elsewhere.
"""

import dataclasses
import gzip
import json
import os
import zlib
from typing import Any, Iterator, List, Optional, Sequence, Tuple

from absl import logging
from google.protobuf import message
import tensorflow as tf

from albert import features
from official.core.host import available_cores
from official.core.input_pipeline import resumable_batches
from official.core.seekable_stream import StreamPosition
from official.core.seekable_stream import seekable_stream
from official.errors import DamagedFileError
from official.io import files as io_files
from official.io import tfrecord
from official.modeling.no_autograph import as_written


TOKEN_ID_ERROR = "token id beyond the vocabulary of the model"


def match_files(file_pattern: str, what: str = "file pattern") -> List[str]:
  """Sorted files matching comma-separated globs; an error if none match."""
  files = []
  for pattern in (p.strip() for p in file_pattern.split(",")):
    if pattern:
      files.extend(io_files.glob(pattern))
  files = sorted(
      set(
          f
          for f in files
          if not os.path.basename(f).startswith(".")
          and not f.endswith((".json", ".npz"))
          and ".tmp" not in f
      )
  )
  if not files:
    raise ValueError(f"{what} {file_pattern!r} matches no files")
  return files


def compression_of(files: List[str]) -> Optional[str]:
  """ "GZIP" or None, from the files' contents (`--gzip` keeps plain names)."""
  gz = [
      tfrecord.is_gzip(f, lambda p: tf.io.gfile.GFile(p, "rb")) for f in files
  ]
  if any(gz) and not all(gz):
    raise ValueError(
        "cannot mix gzip and plain TFRecord files: "
        f"{files[gz.index(True)]} is gzip, "
        f"{files[gz.index(False)]} is not; regenerate one kind"
    )
  return "GZIP" if gz[0] else None


def check_record_shapes(
    file_pattern: str, seq_length: int, max_predictions_per_seq: int
) -> None:
  """Reads the first record and checks every feature's length and dtype.

  Raises:
    ValueError: naming the file, the feature and both lengths.
  """
  files = match_files(file_pattern)
  expected = features.feature_lengths(seq_length, max_predictions_per_seq)
  dataset = tf.data.TFRecordDataset(
      files[:1], compression_type=compression_of(files)
  )
  for raw in dataset.take(1):
    example = tf.train.Example.FromString(raw.numpy())
    if "token_ids" in example.features.feature:
      raise ValueError(
          f"{files[0]}: a documents shard (create_pretraining_data "
          "--output_format=documents), not examples: set "
          "PretrainTask.input_format='documents' to read it"
      )
    for f in features.PRETRAINING_FEATURES:
      feature = example.features.feature.get(f.record_name)
      if feature is None:
        raise ValueError(
            f"{files[0]}: record has no feature {f.record_name!r}; "
            "is this pretraining data?"
        )
      values = (
          feature.int64_list.value
          if f.dtype == "int64"
          else feature.float_list.value
      )
      if len(values) != expected[f.record_name]:
        raise ValueError(
            f"{files[0]}: {f.record_name} has length {len(values)} but the "
            f"run expects {expected[f.record_name]} (seq_length={seq_length}, "
            f"max_predictions_per_seq={max_predictions_per_seq})"
        )
    return
  raise ValueError(f"{files[0]} holds no records")


def find_damaged_record(file_pattern: str) -> Optional[str]:
  """`FILE: record N: what is wrong` for the first record of the matched
  files that is truncated, fails its checksum or is not a tf.train.Example;
  None when every record reads.

  A full pass over the data: for diagnosing a failed run, not for every
  start. Errors that are not damage (permissions, an unreachable file
  system) propagate.
  """
  for path in match_files(file_pattern):
    good = 0
    try:
      with tf.io.gfile.GFile(path, "rb") as raw:
        f = gzip.GzipFile(fileobj=raw) if compression_of([path]) else raw
        for record in tfrecord.read_frames(f):
          tf.train.Example.FromString(record)
          good += 1
    except (
        ValueError,  # framing and checksums (official.io.tfrecord)
        EOFError,  # a truncated gzip stream
        zlib.error,
        gzip.BadGzipFile,
        message.DecodeError,
    ) as e:
      return f"{path}: record {good + 1}: {e}"
  return None


def _manifests(files: Sequence[str]) -> Iterator[Tuple[str, Any]]:
  """(path, its JSON, or the ValueError that reading it raised) of each
  `manifest.json` beside `files`: `tools/create_pretraining_data.py` writes
  one beside its shards; directories without one (e.g. the original tool's
  output) are skipped."""
  for directory in sorted({os.path.dirname(f) for f in files}):
    path = os.path.join(directory, "manifest.json")
    if not tf.io.gfile.exists(path):
      continue
    try:
      with tf.io.gfile.GFile(path) as f:
        yield path, json.load(f)
    except ValueError as e:
      yield path, e


def manifest_vocab_sizes(file_pattern: str) -> List[tuple]:
  """(manifest.json path, vocab_size, what its entries are: "SentencePiece
  pieces" or "WordPiece entries") of the data's manifests (`_manifests`)."""
  found = []
  for path, manifest in _manifests(match_files(file_pattern)):
    try:
      if isinstance(manifest, ValueError):
        raise manifest
      # "tokenizer" since version 2; version 1 (SentencePiece only) had
      # "spm_model".
      tokenizer = manifest.get("tokenizer", manifest.get("spm_model"))
      size = tokenizer["vocab_size"]
      kind = tokenizer.get("kind", "sentencepiece")
    except (ValueError, KeyError, TypeError, AttributeError) as e:
      logging.warning("%s: no vocabulary size in it (%s)", path, e)
      continue
    what = (
        "WordPiece entries" if kind == "wordpiece" else "SentencePiece pieces"
    )
    found.append((path, int(size), what))
  return found


def check_shard_sizes(file_pattern: str) -> None:
  """Every shard that its `manifest.json` (`_manifests`) lists with its
  size ("bytes", since the size check was added) still has that size.

  A file cut short inside the header of its last record reads as a clean
  end of file (TensorFlow's reader stops there), losing records silently;
  the size says so before training starts.

  Raises:
    DamagedFileError: which file, its size and the manifest's.
  """
  files = set(match_files(file_pattern))
  for path, manifest in _manifests(files):
    shards = manifest.get("shards") if isinstance(manifest, dict) else None
    for shard in shards if isinstance(shards, list) else ():
      if not isinstance(shard, dict) or "bytes" not in shard:
        continue
      shard_path = os.path.join(
          os.path.dirname(path), str(shard.get("file", ""))
      )
      if shard_path not in files:
        continue
      size = tf.io.gfile.stat(shard_path).length
      if size != shard["bytes"]:
        raise DamagedFileError(
            f"{shard_path} is {size} bytes but {path} says "
            f"{shard['bytes']}: the file was cut short or changed; restore "
            "it or make the data again (tools/create_pretraining_data.py)"
        )


@dataclasses.dataclass(frozen=True)
class PipelineFiles:
  """What one input pipeline reads (one per `tf.distribute.InputContext`):
  every num_pipelines-th file when there are enough files, else every file
  and every num_pipelines-th record.

  Attributes:
    files: this pipeline's files.
    num_pipelines, pipeline_id: from the input context (1, 0 without one).
    split_files: whether the files are split (else the records).
    cycle: files read interleaved (cycle_length, default min(cores, files)).
  """

  files: List[str]
  num_pipelines: int
  pipeline_id: int
  split_files: bool
  cycle: int

  @classmethod
  def of(cls, files, input_context, cycle_length) -> "PipelineFiles":
    num_pipelines = input_context.num_input_pipelines if input_context else 1
    pipeline_id = input_context.input_pipeline_id if input_context else 0
    split_files = num_pipelines > 1 and len(files) >= num_pipelines
    if split_files:
      files = files[pipeline_id::num_pipelines]
    cycle = min(cycle_length or available_cores(), len(files))
    return cls(files, num_pipelines, pipeline_id, split_files, cycle)

  def records(self, names: tf.Tensor, compression) -> tf.data.Dataset:
    """The records of some files (string [k], k <= `cycle`), interleaved
    one record each in turn, in a deterministic order; this pipeline's
    share when the records are split."""
    records = tf.data.Dataset.from_tensor_slices(names).interleave(
        as_written(
            lambda f: tf.data.TFRecordDataset(f, compression_type=compression)
        ),
        cycle_length=self.cycle,
        block_length=1,
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=True,
    )
    if self.num_pipelines > 1 and not self.split_files:
      records = records.shard(self.num_pipelines, self.pipeline_id)
    return records

  def stream(
      self,
      compression,
      *,
      window_size: int,
      expand,
      training: bool,
      seed: int,
      start: Optional[StreamPosition],
  ) -> tf.data.Dataset:
    """This pipeline's `seekable_stream`: groups of `cycle` files."""
    return seekable_stream(
        self.files,
        read_group=lambda names: self.records(names, compression),
        group_size=self.cycle,
        window_size=window_size,
        expand=expand,
        training=training,
        seed=seed,
        pipeline_id=self.pipeline_id,
        start=start,
    )


def model_batch(parsed, vocab_size: Optional[int]):
  """Batched record features (record names) -> the model's inputs: int32
  (float32 weights), labels [B]; with `vocab_size`, a token id at or above
  it stops the pipeline with `TOKEN_ID_ERROR` (an XLA-compiled embedding
  lookup would otherwise clamp it silently)."""
  batch = {}
  for f in features.PRETRAINING_FEATURES:
    value = parsed[f.record_name]
    if f.record_name == "next_sentence_labels":
      value = value[:, 0]  # [B, 1] -> [B]
    batch[f.model_name] = (
        value if f.dtype == "float32" else tf.cast(value, tf.int32)
    )
  if vocab_size:
    for name in ("input_word_ids", "masked_lm_ids"):
      tf.debugging.assert_less(
          batch[name],
          vocab_size,
          message=f"{TOKEN_ID_ERROR} ({name}, vocab_size {vocab_size})",
      )
  return batch


def pretraining_dataset(
    file_pattern: str,
    *,
    seq_length: int,
    max_predictions_per_seq: int,
    batch_size: int,
    training: bool,
    input_context: Optional[tf.distribute.InputContext] = None,
    seed: int = 0,
    skip_examples: int = 0,
    shuffle_buffer_size: int = 10000,
    cycle_length: Optional[int] = None,
    vocab_size: Optional[int] = None,
    start: Optional[StreamPosition] = None,
) -> tf.data.Dataset:
  """Batches of model inputs (int32; `masked_lm_weights` float32).

  Args:
    file_pattern: comma-separated globs of TFRecord files (`.gz`: gzip).
    seq_length, max_predictions_per_seq: the data's fixed lengths.
    batch_size: examples per batch of this input pipeline (per replica).
    training: shuffle (seeded) and repeat forever; otherwise one ordered pass.
    input_context: this pipeline's place among `num_input_pipelines`; files are
      split between pipelines when there are enough of them, else examples.
    seed: shuffle seed (the same on every pipeline).
    skip_examples: examples of this pipeline's stream already consumed.
    shuffle_buffer_size: examples shuffled together (a window).
    cycle_length: files read interleaved (default: min(cores, files)).
    vocab_size: when given, a token id at or above it stops the pipeline with
      an InvalidArgumentError carrying `TOKEN_ID_ERROR` (an XLA-compiled
      embedding lookup would otherwise clamp it silently).
    start: where a resumed stream goes on (a `POSITION` it gave).

  Returns:
    A dataset of dicts keyed by the model's names (`input_word_ids`,
    `input_mask`, `input_type_ids`, `masked_lm_positions`, `masked_lm_ids`,
    `masked_lm_weights`, `sentence_order_label`, `token_boundary`); in
    training also `POSITION` (`official.core.seekable_stream`).
  """
  files = match_files(file_pattern)
  reading = PipelineFiles.of(files, input_context, cycle_length)
  logging.info(
      "Reading %d files, %d interleaved, shuffle buffer %d%s",
      len(reading.files),
      reading.cycle,
      shuffle_buffer_size,
      "" if training else " (not used: evaluation reads in order)",
  )
  records = reading.stream(
      compression_of(files),
      window_size=shuffle_buffer_size,
      expand=lambda records, epoch: {"record": records},
      training=training,
      seed=seed,
      start=start,
  )
  spec = features.parse_spec(seq_length, max_predictions_per_seq)

  def parse(batch):
    return model_batch(tf.io.parse_example(batch["record"], spec), vocab_size)

  return resumable_batches(
      records,
      parse=parse,
      batch_size=batch_size,
      training=training,
      skip_examples=skip_examples,
  )
