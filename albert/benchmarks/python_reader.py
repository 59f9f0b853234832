"""The documents reader in Python: the benchmark's reference.

The reader as it was before it ran in TensorFlow ops: the same order (file
shuffle, interleave, shuffle buffer, batch) and the offline generator's own
code for the pairs and masks (`pretraining_data.dynamic_masking`), called
through `tf.numpy_function`, so it holds Python's GIL and cannot run where
the input pipeline has no Python. `tools/benchmark_data.py --input=documents`
measures it beside `documents_data.documents_dataset` in the same run; no
training path uses it.
"""

import numpy as np
import tensorflow as tf

from albert.pretraining import data
from albert.pretraining import documents_data
from albert import features
from albert.pretraining_data.dynamic_masking import DynamicExamples
from albert.pretraining_data.dynamic_masking import PAIR_FIELDS
from official.core.input_pipeline import resumable_batches
from official.modeling.no_autograph import as_written

# Documents paired per Python call (amortises the call).
DOCUMENTS_PER_CALL = 32


def python_documents_dataset(
    file_pattern: str,
    *,
    seq_length: int,
    max_predictions_per_seq: int,
    sentence_task: str,
    batch_size: int,
    seed: int = 0,
    shuffle_buffer_size: int = 10000,
) -> tf.data.Dataset:
  """Training batches of documents shards, paired and masked in Python."""
  source = documents_data.read_documents_data(file_pattern, "the benchmark")
  config = source.config(seq_length, max_predictions_per_seq, sentence_task)
  pool = source.pool() if config.uses_random_documents else None
  examples = DynamicExamples(config, source.vocabulary, pool, seed)
  reading = data.PipelineFiles.of(source.files, None, None)
  names = tf.constant(reading.files)

  def epoch_documents(epoch):
    order = tf.random.experimental.stateless_shuffle(
        names, seed=tf.stack([tf.constant(seed, tf.int64), epoch])
    )
    documents = reading.records(order, source.compression)
    return documents.map(as_written(lambda record: (epoch, record)))

  epochs = tf.data.Dataset.range(np.iinfo(np.int64).max)
  documents = epochs.flat_map(as_written(epoch_documents)).batch(
      DOCUMENTS_PER_CALL
  )

  def pair(epoch, records):
    parsed = tf.io.parse_example(records, documents_data.DOCUMENT_SPEC)
    tokens, lengths = parsed["token_ids"], parsed["segment_lengths"]
    outputs = tf.numpy_function(
        examples.pairs,
        [
            epoch,
            parsed["document_id"][:, 0],
            tokens.flat_values,
            tokens.row_splits,
            lengths.flat_values,
            lengths.row_splits,
        ],
        [tf.int32, tf.int32, tf.int32, tf.int32, tf.int64, tf.int64, tf.int32],
        stateful=False,
    )
    outputs[0].set_shape([None, seq_length])
    for tensor in outputs[1:]:
      tensor.set_shape([None])
    return dict(zip(PAIR_FIELDS, outputs))

  pairs = documents.map(
      as_written(pair), num_parallel_calls=tf.data.AUTOTUNE, deterministic=True
  ).unbatch()
  record_features = features.PRETRAINING_FEATURES

  def mask_arrays(*arrays):
    masked = examples.mask(*arrays)
    return tuple(masked[f.record_name] for f in record_features)

  def mask(batch):
    outputs = tf.numpy_function(
        mask_arrays,
        [batch[name] for name in PAIR_FIELDS],
        [
            tf.float32 if f.dtype == "float32" else tf.int32
            for f in record_features
        ],
        stateful=False,
    )
    lengths = features.feature_lengths(seq_length, max_predictions_per_seq)
    for f, value in zip(record_features, outputs):
      value.set_shape([None, lengths[f.record_name]])
    return data.model_batch(
        {f.record_name: v for f, v in zip(record_features, outputs)}, None
    )

  return resumable_batches(
      pairs,
      parse=mask,
      batch_size=batch_size,
      training=True,
      seed=seed + 1,
      shuffle_buffer_size=shuffle_buffer_size,
  )
