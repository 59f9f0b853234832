"""Training a sentence embedder: the two losses and the retrieval metrics
against numpy, the row forms and their one-line errors, and a short
contrastive training that beats the untrained model, predicts, and serves
what albert-embed computes from the model directory."""

import csv
import json
import os
import random

import numpy as np
import pytest
import tensorflow as tf

from albert.checkpoint_conversion import convert
from albert.finetuning import embedders
from albert.finetuning import training as finetuning
from albert.finetuning.own_data import sample_data
from albert.finetuning.own_data import sentence_embedding
from albert.finetuning.own_data.sentence_embedding import SentenceEmbeddingTask
from albert import model_dir as model_dir_lib
from albert.serving import embedding
from albert.serving import tflite_export
from albert.serving import litert
from official.errors import InputError
from tests.albert.finetuning import finetune_helpers as helpers

GIN = "gin/finetune/sentence_embedding.gin"
TOPICS = {
    "sport": ["match", "goal", "team", "coach"],
    "vote": ["ballot", "party", "vote", "senate"],
    "atom": ["atom", "proton", "quark", "lab"],
}
FILLER = (
    "the file name is a string of the module and the list of values "
    "with an object in each class for this function"
).split()


def _text(rng, topic):
  words = rng.sample(FILLER, 5) + rng.sample(TOPICS[topic], 2)
  rng.shuffle(words)
  return " ".join(words)


def _write(path, header, rows):
  with open(path, "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(header)
    writer.writerows(rows)


def write_pairs(folder, seed=0, n_train=256, n_dev=60):
  """train.csv: anchor,positive of one topic; dev.csv: text,text_pair,
  score (1 for one topic, 0 for two); test.csv: text (one per row)."""
  rng = random.Random(seed)
  os.makedirs(folder, exist_ok=True)
  topics = sorted(TOPICS)
  train = []
  for _ in range(n_train):
    topic = rng.choice(topics)
    train.append((_text(rng, topic), _text(rng, topic)))
  _write(os.path.join(folder, "train.csv"), ["anchor", "positive"], train)
  dev = []
  for i in range(n_dev):
    a, b = rng.choice(topics), rng.choice(topics)
    dev.append((f"d{i}", _text(rng, a), _text(rng, b), float(a == b)))
  _write(
      os.path.join(folder, "dev.csv"), ["id", "text", "text_pair", "score"], dev
  )
  test = [(f"t{i}", _text(rng, rng.choice(topics))) for i in range(5)]
  _write(os.path.join(folder, "test.csv"), ["id", "text"], test)
  return test


def _task(tmp_path, rows, header, **kwargs):
  data_dir = tmp_path / "data"
  data_dir.mkdir(exist_ok=True)
  _write(data_dir / "train.csv", header, rows)
  return SentenceEmbeddingTask(
      data_dir=str(data_dir),
      model_config=helpers.TINY,
      seq_length=16,
      **kwargs,
  )


def _unit(x):
  return x / np.linalg.norm(x, axis=-1, keepdims=True)


def test_ranking_loss_is_cross_entropy_over_in_batch_candidates(tmp_path):
  task = _task(
      tmp_path,
      [("a", "b", "c")] * 3,
      ["anchor", "positive", "negative"],
      scale=20.0,
  )
  rng = np.random.default_rng(0)
  outputs = {
      role: rng.normal(size=(4, 6)).astype(np.float32)
      for role in ("anchor", "positive", "negative")
  }
  per_example = task._per_example_loss(
      {k: tf.constant(v) for k, v in outputs.items()}, {}
  ).numpy()
  # By numpy: 20 * cosine to every positive, then every negative; the
  # right answer of anchor i is positive i.
  candidates = np.concatenate(
      [_unit(outputs["positive"]), _unit(outputs["negative"])]
  )
  logits = 20.0 * _unit(outputs["anchor"]) @ candidates.T  # [4, 8]
  logits -= logits.max(-1, keepdims=True)
  log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
  want = -log_p[np.arange(4), np.arange(4)]
  np.testing.assert_allclose(per_example, want, rtol=1e-5)
  # Loss = sum over this batch / examples of the global batch.
  loss = task.compute_loss(
      {k: tf.constant(v) for k, v in outputs.items()},
      {},
      {"examples": tf.constant(8.0)},
  )["loss"]
  assert float(loss) == pytest.approx(want.sum() / 8, rel=1e-5)


def test_cosine_loss_is_squared_error_of_the_scaled_score(tmp_path):
  task = _task(
      tmp_path,
      [("a", "b", "4"), ("c", "d", "0")],
      ["text", "text_pair", "score"],
      max_score=5.0,
  )
  examples = task.read_examples("train")
  assert [e.score for e in examples] == [0.8, 0.0]
  rng = np.random.default_rng(1)
  a, b = rng.normal(size=(2, 2, 5)).astype(np.float32)
  per_example = task._per_example_loss(
      {"anchor": tf.constant(a), "positive": tf.constant(b)},
      {"score": tf.constant([0.8, 0.0])},
  ).numpy()
  cos = np.sum(_unit(a) * _unit(b), -1)
  np.testing.assert_allclose(
      per_example, (cos - [0.8, 0.0]) ** 2, rtol=1e-5, atol=1e-7
  )


def test_retrieval_metrics_by_hand():
  queries = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
  candidates = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0], [0.0, 1.0]])
  # Cosines of query 0: 1 (its answer), .71, .45, 0: rank 1. Query 1: .71
  # for its answer, beaten by .89 and 1: rank 3. Query 2: .95 for its
  # answer, beaten by candidate 1's 1: rank 2.
  got = sentence_embedding.retrieval_metrics(queries, candidates, block=2)
  assert got["accuracy_at_1"] == pytest.approx(1 / 3)
  assert got["mrr"] == pytest.approx((1 + 1 / 3 + 1 / 2) / 3)
  # A candidate as similar as the answer does not push it down.
  tied = sentence_embedding.retrieval_metrics(
      np.array([[1.0, 0.0]]), np.array([[2.0, 0.0], [1.0, 0.0]])
  )
  assert tied == {"accuracy_at_1": 1.0, "mrr": 1.0}


@pytest.mark.parametrize(
    "header,rows,kwargs,message",
    [
        (["text", "label"], [("a", "1")], {}, "anchor,positive[,negative]"),
        (["text", "text_pair", "score"], [("a", "b", "3")], {}, "max_score"),
        (["text", "text_pair", "score"], [("a", "b", "")], {}, "is empty"),
        (["anchor", "positive"], [("a", 7)], {}, None),
    ],
)
def test_rows_of_another_form_are_one_line_errors(
    tmp_path, header, rows, kwargs, message
):
  task = _task(tmp_path, rows, header, **kwargs)
  if message is None:  # CSV gives strings: a number is a text there
    assert task.read_examples("train")[0].texts == ("a", "7")
    return
  with pytest.raises(InputError, match=message.replace("[", r"\[")):
    task.read_examples("train")


def test_the_dev_form_picks_the_metric(tmp_path):
  task = _task(tmp_path, [("a", "b")], ["anchor", "positive"])
  _write(tmp_path / "data" / "dev.csv", ["text", "text_pair", "score"], [])
  with open(tmp_path / "data" / "dev.csv", "a") as f:
    f.write("a,b,0.5\n")
  assert task.main_metric == "spearman"
  assert task.selection_key == "dev/spearman"
  wrong = _task(
      tmp_path, [("a", "b")], ["anchor", "positive"], main_metric="mrr"
  )
  with pytest.raises(InputError, match="report spearman, pearson"):
    _ = wrong.main_metric


def test_settings_are_checked():
  for kwargs, message in (
      ({"pooling": "sum"}, "pooling"),
      ({"scale": 0}, "scale"),
      ({"max_score": -1}, "max_score"),
      ({"main_metric": "accuracy"}, "main_metric"),
  ):
    with pytest.raises(InputError, match=message):
      SentenceEmbeddingTask(model_config=helpers.TINY, seq_length=16, **kwargs)


def test_sample_pairs_keep_a_docstring_in_one_split(tmp_path):
  counts = sample_data.write_sample_pairs(str(tmp_path / "p"), "scored")
  assert counts["train"] > counts["dev"] > 0
  with open(tmp_path / "p" / "dev.csv") as f:
    rows = list(csv.DictReader(f))
  assert {r["score"] for r in rows} == {"1.0", "0.5", "0.0"}
  with open(tmp_path / "p" / "train.csv") as f:
    train_anchors = {r["text"] for r in csv.DictReader(f)}
  assert not train_anchors & {r["text"] for r in rows}


@pytest.mark.slow
def test_contrastive_training_beats_the_untrained_model_and_serves_it(
    tmp_path, spm_model
):
  data_dir = str(tmp_path / "pairs")
  test_rows = write_pairs(data_dir)
  init = helpers.init_checkpoint(tmp_path / "init")
  model_dir = str(tmp_path / "model")
  common = dict(
      model_dir=model_dir, data_dir=data_dir, spm_model_file=spm_model
  )
  params = [
      "SentenceEmbeddingTask.seq_length = 24",
      "SentenceEmbeddingTask.global_batch_size = 32",
      "OptimizerConfig.learning_rate = 5e-4",
      "EpochSchedule.train_epochs = 6.0",
  ]
  # The untrained model: the encoder of the init checkpoint, pooled.
  task = finetuning.build_task(
      gin_file=[GIN],
      gin_param=helpers.TINY_GIN + params,
      init_checkpoint=init,
      data_dir=data_dir,
      spm_model_file=spm_model,
  )
  model = task.build_model()
  task.initialize(model, None)
  untrained = task.evaluate(model)
  results = helpers.finetune(
      "train_and_eval", GIN, params, init_checkpoint=init, **common
  )
  assert results["dev/spearman"] > untrained["dev/spearman"] + 0.2, (
      results,
      untrained,
  )
  assert results["dev/spearman"] > 0.6, results
  settings = model_dir_lib.read_embedding(model_dir)
  assert settings == {
      "pooling": "mean",
      "normalize": True,
      "max_seq_length": 24,
      "do_lower_case": True,
  }

  # predict: the test texts' embeddings, unit length, in file order.
  helpers.finetune("predict", GIN, params, **common)
  vectors = np.load(
      os.path.join(model_dir, "predictions", "test_embeddings.npy")
  )
  assert vectors.shape == (5, helpers.TINY.hidden_size)
  np.testing.assert_allclose(np.linalg.norm(vectors, axis=-1), 1, rtol=1e-5)

  # albert-embed on the model directory embeds as predict did (no padding
  # to seq_length there: the vectors agree to float32 rounding).
  embedder = embedders.open_embedder(model_dir)
  texts = [text for _, text in test_rows]
  np.testing.assert_allclose(embedder.embed(texts), vectors, atol=2e-5)

  # ONNX and TFLite exports carry the pooling and normalisation.
  feeds = {
      name: np.zeros((len(texts), 24), np.int32)
      for name in ("input_word_ids", "input_mask", "input_type_ids")
  }
  for i, text in enumerate(texts):
    ids = embedder.token_ids(text)
    feeds["input_word_ids"][i, : len(ids)] = ids
    feeds["input_mask"][i, : len(ids)] = 1
  onnx_dir = str(tmp_path / "onnx")
  helpers.finetune(
      "export",
      GIN,
      params,
      export_dir=onnx_dir,
      export_format="onnx",
      **common,
  )
  onnxruntime = pytest.importorskip("onnxruntime")
  session = onnxruntime.InferenceSession(
      os.path.join(onnx_dir, "model.onnx"), providers=["CPUExecutionProvider"]
  )
  (got,) = session.run(["embedding"], feeds)
  np.testing.assert_allclose(got, vectors, atol=2e-5)
  task, model, _ = finetuning.load_trained(model_dir=model_dir)
  flatbuffer = tflite_export.convert(
      model,
      tflite_export.finetuned_outputs(task, model),
      seq_length=24,
      precision="float32",
  )
  runner = litert.interpreter(model_content=flatbuffer).get_signature_runner(
      "serving_default"
  )
  np.testing.assert_allclose(runner(**feeds)["embedding"], vectors, atol=2e-5)

  # The export's `embed` and `similarity` signatures serve the same.
  export_dir = str(tmp_path / "export")
  helpers.finetune("export", GIN, params, export_dir=export_dir, **common)
  served = embedding.SavedModelEmbedder(export_dir)
  np.testing.assert_allclose(served.embed(texts), vectors, atol=2e-5)
  similarity = tf.saved_model.load(export_dir).signatures["similarity"]
  cosine = similarity(
      first=tf.constant(texts[:2]), second=tf.constant(texts[1:3])
  )["cosine"].numpy()
  np.testing.assert_allclose(
      cosine, np.sum(vectors[:2] * vectors[1:3], -1), atol=2e-5
  )

  # --to=sentence_transformers: sentence-transformers embeds the same.
  st_dir = str(tmp_path / "st")
  convert.convert(
      target="sentence_transformers", checkpoint=model_dir, output_dir=st_dir
  )
  sentence_transformers = pytest.importorskip("sentence_transformers")
  theirs = sentence_transformers.SentenceTransformer(st_dir, device="cpu")
  np.testing.assert_allclose(
      theirs.encode(texts, convert_to_numpy=True), vectors, atol=2e-5
  )

  # A retrieval dev file reports accuracy@1 and MRR for the same model.
  retrieval_dir = tmp_path / "retrieval"
  retrieval_dir.mkdir()
  rng = random.Random(5)
  rows = []
  for topic in sorted(TOPICS):
    rows.append((_text(rng, topic), _text(rng, topic)))
  _write(retrieval_dir / "dev.csv", ["anchor", "positive"], rows)
  metrics = helpers.finetune(
      "eval", GIN, params, **{**common, "data_dir": str(retrieval_dir)}
  )
  assert set(metrics) >= {"dev/mrr", "dev/accuracy_at_1"}
  assert 1 / 3 <= metrics["dev/mrr"] <= 1.0
  assert metrics["dev/accuracy_at_1"] <= metrics["dev/mrr"]
  with open(os.path.join(model_dir, "eval_results.json")) as f:
    assert json.load(f)["dev/mrr"] == metrics["dev/mrr"]
