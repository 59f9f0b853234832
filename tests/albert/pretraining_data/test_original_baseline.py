"""The benchmark's baseline writes records of the same schema."""

import numpy as np
import tensorflow as tf

from albert import features
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.original_baseline import run_original_baseline


def test_baseline_records_parse_with_the_schema(
    tmp_path, corpus_path, spm_model
):
  lines = open(corpus_path, encoding="utf-8").readlines()[:400]
  config = PretrainingDataConfig(
      max_seq_length=64, max_predictions_per_seq=8, dupe_factor=2
  )
  path = str(tmp_path / "baseline.tfrecord")
  result = run_original_baseline(lines, spm_model, path, config)
  spec = features.parse_spec(64, 8)
  parsed = [
      tf.io.parse_single_example(r, spec) for r in tf.data.TFRecordDataset(path)
  ]
  assert len(parsed) == result["examples"] > 50
  lengths = [int(p["input_mask"].numpy().sum()) for p in parsed]
  assert sum(lengths) == result["tokens"]
  labels = np.array([int(p["next_sentence_labels"][0]) for p in parsed])
  assert 0.3 < labels.mean() < 0.8
  for p in parsed:
    k = int(p["masked_lm_weights"].numpy().sum())
    assert 1 <= k <= 8
