"""Long texts in windows (`albert/finetuning/long_text.py`): the windows
against hand-made ones, the graph against Python, the aggregation against
numpy written from its definition, and the refused settings."""

import numpy as np
import pytest
import tensorflow as tf

from albert.finetuning import long_text
from official.errors import InputError
from tests import helpers as test_helpers
from tests.albert.serving import hostile


def test_windows_by_hand():
  windows = long_text.Windows(length=5, stride=2, max_windows=16)
  # 11 pieces: starts 0, 2, 4, 6; the last reaches the end.
  assert windows.split(list(range(11))) == [
      [0, 1, 2, 3, 4],
      [2, 3, 4, 5, 6],
      [4, 5, 6, 7, 8],
      [6, 7, 8, 9, 10],
  ]
  # 10 pieces: starts 0, 2, 4, 6 too (4 + 5 = 9 < 10), the last one short.
  assert windows.split(list(range(10)))[-1] == [6, 7, 8, 9]
  assert windows.split(list(range(5))) == [[0, 1, 2, 3, 4]]
  assert windows.split([]) == [[]]
  capped = long_text.Windows(length=5, stride=2, max_windows=2)
  assert capped.split(list(range(11))) == [[0, 1, 2, 3, 4], [2, 3, 4, 5, 6]]
  assert capped.reach(11) == 7 and windows.reach(11) == 11
  assert windows.reach(0) == 0
  # A stride of a whole window: no overlap.
  assert long_text.Windows(3, 3, 9).split(list(range(7))) == [
      [0, 1, 2],
      [3, 4, 5],
      [6],
  ]


@pytest.mark.parametrize(
    "length, stride, max_windows", [(5, 2, 16), (7, 7, 3), (4, 1, 50)]
)
def test_graph_windows_equal_python(length, stride, max_windows):
  windows = long_text.Windows(length, stride, max_windows)
  rng = np.random.default_rng(length + stride)
  texts = [list(rng.integers(0, 100, n)) for n in (0, 1, 4, 5, 6, 23, 60, 2)]
  pieces = tf.ragged.constant(texts, dtype=tf.int32, ragged_rank=1)
  got, document, num_windows = windows.split_ragged(pieces)
  want = [windows.split(t) for t in texts]
  assert got.to_list() == [w for ws in want for w in ws]
  assert document.numpy().tolist() == [
      i for i, ws in enumerate(want) for _ in ws
  ]
  assert num_windows.numpy().tolist() == [len(ws) for ws in want]
  # An empty batch has no windows.
  empty = tf.ragged.constant([], dtype=tf.int32, ragged_rank=1)
  got, document, num_windows = windows.split_ragged(empty)
  assert got.nrows() == 0 and num_windows.shape == [0]


def _softmax(x):
  e = np.exp(x - x.max(-1, keepdims=True))
  return e / e.sum(-1, keepdims=True)


def test_aggregation_against_its_definition():
  rng = np.random.default_rng(0)
  logits = rng.normal(size=(9, 3)) * 3
  document = np.array([0, 0, 0, 1, 2, 2, 3, 3, 3])
  groups = [logits[document == d] for d in range(4)]
  mean = long_text.aggregate(logits, document, 4, "mean_logits", "softmax")
  np.testing.assert_allclose(mean, [g.mean(0) for g in groups], rtol=1e-6)
  # Max probability: each class's largest probability, renormalised by
  # softmax (classes) or left as it is (independent labels).
  best = long_text.aggregate(logits, document, 4, "max_probability", "softmax")
  top = np.array([_softmax(g).max(0) for g in groups])
  np.testing.assert_allclose(
      _softmax(best), top / top.sum(-1, keepdims=True), rtol=1e-5
  )
  best = long_text.aggregate(logits, document, 4, "max_probability", "sigmoid")
  sigmoid = lambda x: 1 / (1 + np.exp(-x))
  np.testing.assert_allclose(
      sigmoid(best), [sigmoid(g).max(0) for g in groups], rtol=1e-6
  )
  # The graph gives the same.
  for aggregation in long_text.AGGREGATIONS:
    for activation in ("softmax", "sigmoid"):
      np.testing.assert_allclose(
          long_text.aggregate_tf(
              tf.constant(logits, tf.float32),
              tf.constant(document, tf.int32),
              4,
              aggregation,
              activation,
          ).numpy(),
          long_text.aggregate(logits, document, 4, aggregation, activation),
          rtol=1e-5,
          atol=1e-6,
      )


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(max_windows=0), r"max_windows=0 must be an integer >= 1"),
        (dict(max_windows=-2), r"max_windows=-2 must be"),
        (dict(window_stride=0), r"window_stride=0 must be in \[1, 126\]"),
        (dict(window_stride=127), r"window_stride=127 must be"),
        (dict(long_text="slide"), r"long_text='slide' is not one of"),
        (dict(aggregation="max"), r"aggregation='max' is not one of"),
    ],
)
def test_bad_settings_are_one_line(settings, message):
  args = dict(
      long_text="windows",
      window_stride=None,
      max_windows=4,
      aggregation="mean_logits",
      seq_length=128,
  )
  args.update(settings)
  with pytest.raises(InputError, match=message) as error:
    long_text.check("Task", **args)
  assert "\n" not in str(error.value)
  with pytest.raises(InputError, match="regression score has no probability"):
    long_text.check_aggregation("Task", "max_probability", "identity")


def test_default_stride_is_half_a_window():
  windows = long_text.check(
      "Task",
      long_text="windows",
      window_stride=None,
      max_windows=8,
      aggregation="mean_logits",
      seq_length=128,
  )
  assert windows == long_text.Windows(126, 63, 8)
  assert (
      long_text.check(
          "Task",
          long_text="truncate",
          window_stride=None,
          max_windows=8,
          aggregation="mean_logits",
          seq_length=128,
      )
      is None
  )


def test_graph_max_context_equals_bert_rule():
  # Two texts of 23 and 4 pieces and an empty one, windows of 6 every 2.
  windows = long_text.Windows(length=6, stride=2, max_windows=7)
  lengths = [23, 4, 0]
  pieces = tf.RaggedTensor.from_row_lengths(
      tf.range(sum(lengths), dtype=tf.int32), lengths
  )
  index, document, _ = windows.positions(pieces)
  window, place = windows.max_context_positions(index, sum(lengths))
  want_window, want_place = [], []
  offset = 0  # the text's first window among all windows
  for n in lengths:
    spans = windows.spans(n)
    for p in range(n):
      held = [
          j for j in range(len(spans)) if long_text.is_max_context(spans, j, p)
      ]
      want_window.append(offset + held[0] if held else -1)
      want_place.append(p - spans[held[0]][0] if held else -1)
    offset += len(spans)
  # 7 windows reach piece 6 x 2 + 6 = 18: pieces 18..22 of the first text
  # are read by none.
  assert want_window[18:23] == [-1] * 5
  assert window.numpy().tolist() == want_window
  assert place.numpy().tolist() == want_place
  assert document.numpy().tolist() == [0] * 7 + [1, 2]


# --- The tasks: Python features and predictions against the SavedModel graph.

WORDS = (
    "the file name is a string of the module and the list of values with "
    "an object in each class for this function"
).split()


def _long_texts(folder, labels, n=6, seed=0):
  """train.csv and dev.csv of texts from 3 to 90 words, labels cycling."""
  rng = np.random.default_rng(seed)
  folder.mkdir(exist_ok=True)
  texts = []
  for split in ("train", "dev"):
    rows = ["id,text,label"]
    for i in range(n):
      words = rng.choice(WORDS, int(rng.integers(3, 90)))
      rows.append(f"{split}-{i},{' '.join(words)},{labels[i % len(labels)]}")
      texts.append(" ".join(words))
    (folder / f"{split}.csv").write_text("\n".join(rows) + "\n")
  return texts[n:]  # dev's


def _task(kind, folder, spm_model, **settings):
  from albert.finetuning.own_data import text_classification
  from albert.finetuning.own_data import text_multilabel
  from tests.albert.finetuning import finetune_helpers as helpers

  cls = {
      "classification": text_classification.TextClassificationTask,
      "regression": text_classification.TextRegressionTask,
      "multilabel": text_multilabel.TextMultiLabelTask,
  }[kind]
  return cls(
      data_dir=str(folder),
      spm_model_file=spm_model,
      seq_length=16,
      eval_batch_size=4,
      model_config=helpers.TINY,
      **settings,
  )


@pytest.mark.parametrize(
    "kind, labels, aggregation",
    [
        ("classification", ["a", "b", "c"], "mean_logits"),
        ("classification", ["a", "b", "c"], "max_probability"),
        ("multilabel", ["a|b", "b", ""], "max_probability"),
        ("regression", ["0.5", "2", "1"], "mean_logits"),
    ],
)
def test_text_windows_serve_what_predict_reports(
    tmp_path, spm_model, kind, labels, aggregation
):
  import tf_keras

  texts = _long_texts(tmp_path / "data", labels)
  task = _task(
      kind,
      tmp_path / "data",
      spm_model,
      long_text="windows",
      window_stride=5,
      max_windows=6,
      aggregation=aggregation,
  )
  task.read_examples("train")  # the label set
  tf_keras.utils.set_random_seed(1)
  model = task.build_model()
  with test_helpers.eagerly():  # The reference the served answers are held to.
    examples, features, outputs = task.predict(model, "dev")
  assert [e.text_a for e in examples] == texts
  # One document by hand: its windows through the model, then the rule.
  pieces = task.tokenizer.tokenize(texts[1])
  assert len(pieces) > 14 * 2  # several windows
  windows = task.windows.split(pieces)
  assert len(windows) == min(6, 1 + -(-(len(pieces) - 14) // 5))
  packed = [task.pack(w) for w in windows]
  batch = {k: np.stack([p[k] for p in packed]) for k in packed[0]}
  logits = model(batch, training=False)["logits"].numpy().astype(np.float64)
  if aggregation == "mean_logits":
    want = logits.mean(0)
  elif kind == "multilabel":
    want = logits.max(0)
  else:
    want = np.log(_softmax(logits).max(0))
  np.testing.assert_allclose(outputs["logits"][1], want, rtol=1e-5, atol=1e-5)
  assert outputs["num_windows"][1] == len(windows)

  module = task.serving_module(model, task.preprocessor())
  served = module.signatures()["serving_default"](tf.constant(texts))
  assert served["num_windows"].numpy().tolist() == list(outputs["num_windows"])
  if kind == "regression":
    np.testing.assert_allclose(
        served["score"], outputs["logits"][:, 0], rtol=1e-5, atol=1e-5
    )
  elif kind == "multilabel":
    np.testing.assert_allclose(
        served["probabilities"],
        task.probabilities(outputs),
        rtol=1e-5,
        atol=1e-6,
    )
  else:
    np.testing.assert_allclose(
        served["probabilities"],
        _softmax(outputs["logits"].astype(np.float64)),
        rtol=1e-5,
        atol=1e-6,
    )
  empty = module.signatures()["serving_default"](tf.constant([], tf.string))
  assert empty["num_windows"].shape == [0]


def test_truncate_is_the_default_and_todays_features(tmp_path, spm_model):
  _long_texts(tmp_path / "data", ["a", "b"])
  default = _task("classification", tmp_path / "data", spm_model)
  truncate = _task(
      "classification", tmp_path / "data", spm_model, long_text="truncate"
  )
  examples = default.read_examples("dev")
  truncate.read_examples("train")
  ours = list(default.featurize(examples, training=True))
  assert len(ours) == len(examples)
  for feature, again, example in zip(
      ours, truncate.featurize(examples, training=True), examples
  ):
    # Today's rule: the first seq_length - 2 pieces.
    want = default.pack(default.tokenizer.tokenize(example.text_a)[:14])
    for name in want:
      np.testing.assert_array_equal(feature[name], want[name])
      np.testing.assert_array_equal(again[name], want[name])
  assert default.feature_options() == truncate.feature_options()
  assert "long_text" not in default.feature_options()  # the same cache key


def test_windows_refuse_text_pairs(tmp_path, spm_model):
  folder = tmp_path / "pairs"
  folder.mkdir()
  (folder / "train.csv").write_text("text,text_pair,label\nx,y,a\nz,w,b\n")
  task = _task("classification", folder, spm_model, long_text="windows")
  with pytest.raises(InputError, match="reads single texts") as error:
    task.read_examples("train")
  assert "\n" not in str(error.value)


def _conll(folder, sentences):
  folder.mkdir(exist_ok=True)
  for split in ("train", "dev"):
    lines = []
    for words, tags in sentences:
      lines += [f"{w} {t}" for w, t in zip(words, tags)] + [""]
    (folder / f"{split}.txt").write_text("\n".join(lines) + "\n")


def _tagged(rng, n):
  words = list(rng.choice(WORDS + ["alice", "paris", "zürich"], n))
  tags = [
      "B-PER" if w == "alice" else "B-LOC" if w in ("paris", "zürich") else "O"
      for w in words
  ]
  return words, tags


def test_token_windows_tag_every_word_from_its_best_window(tmp_path, spm_model):
  from albert.finetuning.own_data import token_classification
  from tests.albert.finetuning import finetune_helpers as helpers
  import tf_keras

  rng = np.random.default_rng(3)
  sentences = [_tagged(rng, n) for n in (70, 5, 1, 33)]
  _conll(tmp_path / "ner", sentences)
  task = token_classification.TokenClassificationTask(
      data_dir=str(tmp_path / "ner"),
      spm_model_file=spm_model,
      seq_length=16,
      eval_batch_size=4,
      model_config=helpers.TINY,
      long_text="windows",
      window_stride=6,
      max_windows=64,
  )
  examples = task.read_examples("dev")
  features = list(task.featurize(examples, training=True))
  labels = list(task.labels)
  for document, (words, tags) in enumerate(sentences):
    mine = [f for f in features if f["document"] == document]
    # Every word is read by exactly one window, at its first piece.
    for k, tag in enumerate(tags):
      chosen = [f for f in mine if f["word_positions"][k] >= 0]
      assert len(chosen) == 1, (document, k)
      (feature,) = chosen
      p = feature["word_positions"][k]
      assert feature["label_ids"][p] == labels.index(tag)
      assert (
          feature["input_word_ids"][p] == task.tokenizer.tokenize(words[k])[0]
      )
  assert len([f for f in features if f["document"] == 0]) > 3

  task.read_examples("train")
  tf_keras.utils.set_random_seed(2)
  model = task.build_model()
  with test_helpers.eagerly():  # The reference the served tags are held to.
    examples, features, outputs = task.predict(model, "dev")
  offline = task._full_tags(examples, features, outputs)
  module = task.serving_module(model, task.preprocessor())
  served = module.signatures()["serving_default"](
      tf.constant([" ".join(words) for words, _ in sentences])
  )
  assert served["num_windows"].numpy().tolist() == [
      len([f for f in features if f["document"] == d])
      for d in range(len(sentences))
  ]
  for i, tags in enumerate(offline):
    n = int(served["num_words"][i])
    assert [t.decode() for t in served["tags"][i][:n].numpy()] == tags
  # Windows never reaching a word: tagged O with score 0, as offline.
  capped = token_classification.TokenClassificationTask(
      data_dir=str(tmp_path / "ner"),
      spm_model_file=spm_model,
      seq_length=16,
      model_config=helpers.TINY,
      long_text="windows",
      window_stride=6,
      max_windows=2,
  )
  capped.read_examples("train")
  module = capped.serving_module(model, capped.preprocessor())
  served = module.signatures()["serving_default"](
      tf.constant([" ".join(sentences[0][0])])
  )
  with test_helpers.eagerly():
    examples, features, outputs = capped.predict(model, "dev")
  tags = capped._full_tags(examples, features, outputs)[0]
  assert tags[-5:] == ["O"] * 5
  assert [t.decode() for t in served["tags"][0].numpy()] == tags
  assert served["scores"][0][-1] == 0


CUES = {"sports": "match", "politics": "vote", "science": "atom"}


def _decided_late(folder, n_train=300, n_dev=45, seed=0):
  """Texts of 20-27 filler words, then the label's cue word three times."""
  rng = np.random.default_rng(seed)
  folder.mkdir()
  labels = sorted(CUES)
  texts = {}
  for split, n in (("train", n_train), ("dev", n_dev), ("test", 6)):
    rows = ["id,text,label"]
    texts[split] = []
    for i in range(n):
      label = labels[i % 3]
      words = list(rng.choice(WORDS, int(rng.integers(20, 28))))
      text = " ".join(words + [CUES[label]] * 3)
      rows.append(f"{split}-{i},{text},{label}")
      texts[split].append((text, label))
    (folder / f"{split}.csv").write_text("\n".join(rows) + "\n")
  return texts


@pytest.mark.slow
def test_windows_train_predict_and_serve_per_text(tmp_path, spm_model):
  import csv
  import json
  import os

  import gin

  from albert.finetuning import training as finetuning
  from tests.albert.finetuning import finetune_helpers as helpers

  texts = _decided_late(tmp_path / "data")
  model_dir = str(tmp_path / "model")
  common = dict(
      model_dir=model_dir,
      data_dir=str(tmp_path / "data"),
      spm_model_file=spm_model,
  )
  gin_file = "gin/finetune/text_classification.gin"
  params = [
      "TextClassificationTask.seq_length = 16",
      "TextClassificationTask.global_batch_size = 32",
      "TextClassificationTask.long_text = 'windows'",
      "TextClassificationTask.window_stride = 7",
      "OptimizerConfig.learning_rate = 1e-3",
      "EpochSchedule.train_epochs = 4.0",
  ]
  results = helpers.finetune(
      "train_and_eval",
      gin_file,
      params,
      init_checkpoint=helpers.init_checkpoint(tmp_path / "init"),
      **common,
  )
  assert results["dev/accuracy"] >= 0.9, results
  # Every dev text once in the confusion matrix: metrics are per text.
  assert sum(v for k, v in results.items() if "/confusion/" in k) == 45
  with open(os.path.join(model_dir, "labels.json")) as f:
    saved = json.load(f)
  assert saved["long_text"] == {
      "mode": "windows",
      "window_stride": 7,
      "max_windows": 16,
      "aggregation": "mean_logits",
  }

  # predict and export without the long-text settings: the model
  # directory's.
  helpers.finetune("predict", gin_file, params[:1], **common)
  with open(
      os.path.join(model_dir, "predictions", "test_predictions.csv")
  ) as f:
    rows = list(csv.DictReader(f))
  assert [r["prediction"] for r in rows] == [
      label for _, label in texts["test"]
  ]
  gin.clear_config()
  export_dir = str(tmp_path / "export")
  finetuning.run(mode="export", model_dir=model_dir, export_dir=export_dir)
  test_texts = [text for text, _ in texts["test"]]
  out = helpers.call_saved_model(export_dir, {"text": test_texts})
  assert out["label"] == [r["prediction"] for r in rows]
  np.testing.assert_allclose(
      out["probabilities"],
      [[float(r[f"p_{k}"]) for k in sorted(CUES)] for r in rows],
      atol=1e-5,
  )
  assert all(n >= 2 for n in out["num_windows"])
  hostile.assert_answers_everything(export_dir, ["serving_default"])


def test_graph_max_context_ties_go_to_the_first_window():
  # Windows of 6 every piece: piece 3 scores min(3, 2) + 0.06 in window 0
  # and min(2, 3) + 0.06 in window 1; window 0 must win.
  windows = long_text.Windows(length=6, stride=1, max_windows=8)
  spans = windows.spans(8)
  assert long_text.is_max_context(spans, 0, 3)
  assert not long_text.is_max_context(spans, 1, 3)
  pieces = tf.RaggedTensor.from_row_lengths(tf.range(8, dtype=tf.int32), [8])
  index, _, _ = windows.positions(pieces)
  window, place = windows.max_context_positions(index, 8)
  want = [
      next(
          j for j in range(len(spans)) if long_text.is_max_context(spans, j, p)
      )
      for p in range(8)
  ]
  assert window.numpy().tolist() == want
  assert want[3] == 0 and place.numpy()[3] == 3


def test_the_runs_settings_replace_the_model_directorys(tmp_path):
  def settings(**given):
    args = dict(
        long_text=None,
        window_stride=None,
        max_windows=None,
        aggregation=None,
        seq_length=18,
        activation="softmax",
    )
    args.update(given)
    return long_text.LongText("Task", **args)

  saved = {
      "mode": "windows",
      "window_stride": 4,
      "max_windows": 3,
      "aggregation": "mean_logits",
  }
  unset = settings()
  assert unset.facts() == {"mode": "truncate"}
  unset.adopt("labels.json", saved)
  assert unset.facts() == saved
  assert unset.windows == long_text.Windows(16, 4, 3)
  # An inference choice given by the run wins; the rest stays the saved.
  chosen = settings(aggregation="max_probability")
  chosen.adopt("labels.json", saved)
  assert chosen.facts() == {**saved, "aggregation": "max_probability"}
  # A model directory from before windows: truncate, unless the run says.
  old = settings()
  old.adopt("labels.json", None)
  assert old.windows is None
  forced = settings(long_text="windows", max_windows=2)
  forced.adopt("labels.json", None)
  assert forced.windows == long_text.Windows(16, 8, 2)


def test_a_pair_model_is_not_served_in_windows(tmp_path, spm_model):
  import json

  from albert.finetuning import task_state

  (tmp_path / "labels.json").write_text(
      json.dumps(
          {
              "task": "text_classification",
              "labels": ["a", "b"],
              "text_pair": True,
              "long_text": {"mode": "truncate"},
          }
      )
  )
  task = _task("classification", tmp_path, spm_model, long_text="windows")
  with pytest.raises(InputError, match="reads text pairs") as error:
    task.use_state(task_state.TaskState.of(str(tmp_path), for_model=True))
  assert "\n" not in str(error.value)
