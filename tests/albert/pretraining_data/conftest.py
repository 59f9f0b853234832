"""Session fixtures for the pretraining-data tests: one generated dataset
parsed with TensorFlow for the statistics tests, and the encoded corpus. The
sample corpus and its SentencePiece model come from tests/conftest.py."""

import numpy as np
import pytest

from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.pipeline import create_pretraining_data
# Small shapes for the statistics dataset; blocks of 64 KB give 7 blocks.
STATS_CONFIG = dict(
    max_seq_length=128,
    max_predictions_per_seq=20,
    dupe_factor=4,
    block_bytes=64 << 10,
)


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory):
  return tmp_path_factory.mktemp("pretraining_data")


@pytest.fixture(scope="session")
def stats_dataset(data_dir, corpus_path, spm_model):
  """(manifest, config, dict of parsed numpy arrays) of one generated set."""
  import tensorflow as tf
  from albert import features

  # Ours, the split rule: SOP labels are 50% (the original's
  # random_document rule is checked against the original algorithm in
  # test_statistics.py).
  config = PretrainingDataConfig(**STATS_CONFIG, single_segment="split")
  out = data_dir / "stats"
  manifest = create_pretraining_data(
      input_file=corpus_path,
      output_file=str(out / "train.tfrecord"),
      spm_model_file=spm_model,
      config=config,
      num_output_shards=2,
      num_workers=2,
  )
  files = sorted(str(p) for p in out.glob("train-*.tfrecord"))
  spec = features.parse_spec(
      config.max_seq_length, config.max_predictions_per_seq
  )
  parts = [
      tf.io.parse_example(batch, spec)
      for batch in tf.data.TFRecordDataset(files).batch(1024)
  ]
  arrays = {
      name: np.concatenate([p[name].numpy() for p in parts]) for name in spec
  }
  return manifest, config, arrays, files


@pytest.fixture(scope="session")
def documents(corpus_path, tokenizer):
  """The sample corpus as encoded Documents (one block, whole file)."""
  import os
  from albert.pretraining_data import corpus_reader
  from albert.pretraining_data.block_generator import tokenize_documents

  size = os.path.getsize(corpus_path)
  block = corpus_reader.Block(0, corpus_path, 0, size, size, size)
  return tokenize_documents(
      corpus_reader.read_documents(block, 1 << 30), tokenizer
  )


@pytest.fixture(scope="session")
def documents_data(data_dir, corpus_path, spm_model):
  """(manifest, shard pattern) of the sample corpus in the documents format,
  with the statistics dataset's block size and the split rule."""
  config = PretrainingDataConfig(
      output_format="documents",
      dupe_factor=1,
      block_bytes=STATS_CONFIG["block_bytes"],
      single_segment="split",
  )
  out = data_dir / "documents"
  manifest = create_pretraining_data(
      input_file=corpus_path,
      output_file=str(out / "docs.tfrecord"),
      spm_model_file=spm_model,
      config=config,
      num_output_shards=2,
      num_workers=2,
  )
  return manifest, str(out / "docs-*.tfrecord")


def read_documents_examples(pattern, num_examples, **overrides):
  """`num_examples` training examples of the documents reader, as the
  statistics dataset's arrays (record names, numpy)."""
  from albert.pretraining import documents_data as reader
  from albert import features

  options = dict(
      seq_length=STATS_CONFIG["max_seq_length"],
      max_predictions_per_seq=STATS_CONFIG["max_predictions_per_seq"],
      sentence_task="sop",
      batch_size=256,
      training=True,
      seed=5,
  )
  options.update(overrides)
  dataset = reader.documents_dataset(pattern, **options)
  batches = list(dataset.take(-(-num_examples // options["batch_size"])))
  arrays = {}
  for f in features.PRETRAINING_FEATURES:
    value = np.concatenate([b[f.model_name].numpy() for b in batches])
    arrays[f.record_name] = value[:num_examples]
  arrays["next_sentence_labels"] = arrays["next_sentence_labels"][:, None]
  return arrays


@pytest.fixture(scope="session")
def documents_stats(documents_data, stats_dataset):
  """(manifest, config, arrays) of the documents reader, as many examples
  as the offline statistics dataset (4 passes: about 4 epochs)."""
  manifest, pattern = documents_data
  _, config, offline, _ = stats_dataset
  arrays = read_documents_examples(pattern, len(offline["input_ids"]))
  return manifest, config, arrays
