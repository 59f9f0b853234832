"""Fine-tuning features converted once into TFRecords, and read back.

Tokenising a large training set (MNLI: 393k pairs, SQuAD: 88k questions over
long contexts) takes minutes; reruns, resumed runs and other hyperparameters
reuse the records. A cache file is named by a digest of everything that
changes the features: the task and its feature options, the SentencePiece
model's bytes, lower-casing, the sequence length, and the examples themselves
(so edited data files are re-converted). A file appears complete or not at
all: records go to a temporary name, then the manifest (written last) makes
the entry valid.
"""

import hashlib
import json
import os
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Sequence

from absl import logging
import numpy as np
import tensorflow as tf

from official.core.input_pipeline import resumable_batches
from official.core.progress import Progress
from official.io import atomic_write
from official.io import files

FeatureSpec = Mapping[str, tf.TensorSpec]


def cache_digest(key: Mapping[str, Any], examples: Sequence[Any]) -> str:
  """sha256 of the JSON-able `key` and the examples' reprs, 16 hex digits."""
  digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8"))
  for example in examples:
    digest.update(repr(example).encode("utf-8"))
  return digest.hexdigest()[:16]


def _to_example(feature: Mapping[str, Any], spec: FeatureSpec) -> bytes:
  values = {}
  for name, tensor_spec in spec.items():
    array = np.asarray(feature[name]).reshape(-1)
    if tensor_spec.dtype.is_floating:
      values[name] = tf.train.Feature(
          float_list=tf.train.FloatList(value=array)
      )
    else:
      values[name] = tf.train.Feature(
          int64_list=tf.train.Int64List(value=array)
      )
  return tf.train.Example(
      features=tf.train.Features(feature=values)
  ).SerializeToString()


def write_features(
    path: str,
    features: Iterable[Mapping[str, Any]],
    spec: FeatureSpec,
    total: Optional[int] = None,
) -> int:
  """Writes `features` (numpy-like values per spec key) to a TFRecord file.

  The file appears under `path` only when complete (renamed from a
  temporary, or on an object store uploaded when closed); returns the
  record count.
  """
  tmp = f"{path}.tmp-{os.getpid()}" if files.renames_atomically(path) else path
  count = 0
  progress = Progress(total)
  with tf.io.TFRecordWriter(tmp) as writer:
    for feature in features:
      writer.write(_to_example(feature, spec))
      count += 1
      if count % 10000 == 0:
        progress.update(count)
        logging.info("Converted %s", progress.describe("features"))
  if tmp != path:
    files.rename(tmp, path)
  return count


def cached_features(
    cache_dir: str,
    name: str,
    digest: str,
    make_features: Callable[[], Iterable[Mapping[str, Any]]],
    spec: FeatureSpec,
    total: Optional[int] = None,
) -> tuple:
  """(TFRecord path, record count) of a cache entry, converting on a miss.

  Args:
    cache_dir: where entries live (created if needed).
    name: readable prefix of the entry, e.g. `mnli-train-seq128`.
    digest: `cache_digest` of what the features depend on.
    make_features: called on a miss; yields feature dicts.
    spec: the record layout (name -> fixed shape and dtype).
    total: expected number of features for progress lines, if known.
  """
  files.makedirs(cache_dir)
  path = os.path.join(cache_dir, f"{name}-{digest}.tfrecord")
  manifest = path + ".json"
  if files.exists(manifest) and files.exists(path):
    count = json.loads(files.read_text(manifest))["count"]
    logging.info("Using cached features %s (%d records)", path, count)
    return path, count
  logging.info("Converting features into %s", path)
  count = write_features(path, make_features(), spec, total)
  spec_json = {k: [list(s.shape), s.dtype.name] for k, s in spec.items()}
  atomic_write.write_atomic(
      manifest,
      json.dumps({"count": count, "spec": spec_json}, indent=2, sort_keys=True),
  )
  return path, count


def record_dataset(
    path: str,
    spec: FeatureSpec,
    *,
    batch_size: int,
    training: bool,
    input_context: Optional[tf.distribute.InputContext] = None,
    seed: int = 0,
    skip_examples: int = 0,
    shuffle_buffer_size: int = 10000,
) -> tf.data.Dataset:
  """Batches of cached features (int32 / float32 as in `spec`).

  Training: each pipeline reads every num_input_pipelines-th record, repeats
  forever and shuffles (seeded, so the stream is deterministic and a resumed
  run skips the `skip_examples` records it has already consumed). Otherwise
  one ordered pass with a final partial batch.
  """
  dataset = tf.data.TFRecordDataset(path)
  if input_context and input_context.num_input_pipelines > 1:
    dataset = dataset.shard(
        input_context.num_input_pipelines, input_context.input_pipeline_id
    )
  if training:
    dataset = dataset.repeat()
  parse_spec = {
      name: tf.io.FixedLenFeature(
          s.shape, tf.float32 if s.dtype.is_floating else tf.int64
      )
      for name, s in spec.items()
  }

  def parse(records):
    parsed = tf.io.parse_example(records, parse_spec)
    return {name: tf.cast(parsed[name], spec[name].dtype) for name in spec}

  return resumable_batches(
      dataset,
      parse=parse,
      batch_size=batch_size,
      training=training,
      seed=seed,
      skip_examples=skip_examples,
      shuffle_buffer_size=shuffle_buffer_size,
  )


def stack_features(
    features: Sequence[Mapping[str, Any]], spec: FeatureSpec
) -> Dict[str, np.ndarray]:
  """In-memory features -> {name: array [N, ...]} in the spec's dtypes."""
  return {
      name: np.stack([np.asarray(f[name]) for f in features])
      .astype(s.dtype.as_numpy_dtype)
      .reshape((len(features),) + tuple(s.shape))
      for name, s in spec.items()
  }
