"""SquadTask pieces without training: features, loss normalisation, shapes."""

import json

import numpy as np
import pytest
import tensorflow as tf

from albert.finetuning.squad.task import SquadTask
from tests import helpers

TINY = helpers.tiny_config(
    vocab_size=2000, num_layers=1, max_position_embeddings=64
)


def _task(tmp_path, spm_model, version):
  data = {
      "version": version,
      "data": [
          {
              "title": "t",
              "paragraphs": [
                  {
                      "context": "The value of the argument is returned.",
                      "qas": [
                          {
                              "id": "a",
                              "question": "What is returned?",
                              "is_impossible": False,
                              "answers": [{"text": "value", "answer_start": 4}],
                          },
                          {
                              "id": "b",
                              "question": "Why?",
                              "is_impossible": True,
                              "answers": [],
                          },
                      ],
                  }
              ],
          }
      ],
  }
  for split in ("train", "dev"):
    (tmp_path / f"{split}-v{version}.json").write_text(json.dumps(data))
  return SquadTask(
      version=version,
      data_dir=str(tmp_path),
      spm_model_file=spm_model,
      seq_length=32,
      max_query_length=8,
      doc_stride=8,
      model_config=TINY,
  )


def _batch(task, split):
  features = list(task.featurize(task.read_examples(split), training=True))
  return {
      k: tf.constant(np.stack([f[k] for f in features]))
      for k in task.feature_spec()
  }


@pytest.mark.parametrize("version", ["1.1", "2.0"])
def test_loss_is_sum_over_global_examples(tmp_path, spm_model, version):
  task = _task(tmp_path, spm_model, version)
  assert task.name == f"squad_v{version}"
  batch = _batch(task, "train")
  assert batch["start_position"].numpy()[1] == 0  # Unanswerable -> [CLS].
  model = task.build_model()
  outputs = model(batch, training=True)
  assert outputs["end_logits"].shape == (2, 32)

  def ce(logits, labels):  # numpy softmax cross-entropy
    z = logits.numpy().astype(np.float64)
    z = z - z.max(-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return -log_p[np.arange(2), labels.numpy()]

  per_example = (
      ce(outputs["start_logits"], batch["start_position"])
      + ce(outputs["end_logits"], batch["end_position"])
  ) / 2
  if version == "2.0":
    z = outputs["cls_logits"].numpy()
    y = batch["is_impossible"].numpy()
    per_example += 0.5 * (np.maximum(z, 0) - z * y + np.log1p(np.exp(-abs(z))))
  # The global batch has 8 examples, this replica 2: sum / 8.
  loss = task.compute_loss(outputs, batch, {"examples": tf.constant(8.0)})
  np.testing.assert_allclose(loss["loss"], per_example.sum() / 8, rtol=1e-5)
  assert task.loss_totals(batch)["examples"] == 2.0
  metrics = task.build_metrics()
  task.update_metrics(metrics, model(batch, training=False), batch)
  assert all(m.name for m in metrics)


def test_v2_evaluate_reports_official_and_best_threshold(tmp_path, spm_model):
  task = _task(tmp_path, spm_model, "2.0")
  model = task.build_model()
  metrics = task.evaluate(model)
  for key in (
      "exact",
      "f1",
      "HasAns_exact",
      "NoAns_exact",
      "best_exact",
      "best_f1",
      "best_f1_thresh",
      "null_threshold",
  ):
    assert f"dev/{key}" in metrics
  assert metrics["dev/null_threshold"] == metrics["dev/best_f1_thresh"]
  paths = task.predict_to_files(model, str(tmp_path / "out"))
  assert sorted(p.rsplit("/", 1)[1] for p in paths) == [
      "nbest_predictions.json",
      "null_odds.json",
      "predictions.json",
  ]


def test_bad_options(tmp_path, spm_model):
  with pytest.raises(ValueError, match="version='3.0'"):
    SquadTask(version="3.0", model_config=TINY, seq_length=32)
  with pytest.raises(ValueError, match="max_query_length=40"):
    SquadTask(max_query_length=40, model_config=TINY, seq_length=32)
