"""The SQuAD SavedModel's in-graph windows and decoding against the Python
path (`SquadTask.featurize` + `SquadPostprocessor`): the same answers from the
same model on contexts that need several doc-stride windows."""

import json
import os
import random
import re

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from albert.finetuning.squad.task import SquadTask
from tests.albert.serving import hostile
from tests import helpers
from tests.albert.finetuning.finetune_helpers import TINY

SPACES = (" ", " ", " ", "  ", "\t", "\n", " \r\n", "\u202f")
WORDS = (
    "the file name is a string of the module and list values with an "
    "object in each class for this function returns None, when (x) "
    "Café naïve 12,5"
).split()


def _write_dev(path, version, rng, n=12):
  paragraphs = []
  for k in range(n):
    # Words apart by SQuAD's whitespace in its varied forms.
    words = rng.choices(WORDS, k=rng.randint(0, 45) if k else 0)
    context = "".join(w + rng.choice(SPACES) for w in words)
    context = rng.choice(SPACES) + context if k % 3 == 1 else context.rstrip()
    qa = {
        "id": f"q{k}",
        "question": " ".join(rng.choices(WORDS, k=6)),
        "answers": [],
    }
    if version == "2.0":
      qa["is_impossible"] = True
    paragraphs.append({"context": context, "qas": [qa]})
  with open(path, "w") as f:
    json.dump(
        {
            "version": version,
            "data": [{"title": "t", "paragraphs": paragraphs}],
        },
        f,
    )
  return [p["qas"][0]["question"] for p in paragraphs], [
      p["context"] for p in paragraphs
  ]


@pytest.mark.parametrize("version", ["1.1", "2.0"])
@pytest.mark.slow
def test_served_answers_equal_the_python_predictions(
    tmp_path, spm_model, version
):
  questions, contexts = _write_dev(
      tmp_path / f"dev-v{version}.json", version, random.Random(3)
  )
  # Keras draws unseeded initialiser seeds from Python's `random`, which
  # tf.random.set_seed does not reset: without this the model depended on
  # the tests run before it in the worker.
  tf_keras.utils.set_random_seed(1)
  task = SquadTask(
      data_dir=str(tmp_path),
      spm_model_file=spm_model,
      version=version,
      seq_length=32,
      doc_stride=7,
      max_query_length=6,
      n_best_size=64,
      max_answer_length=5,
      null_score_diff_threshold=1e8,
      model_config=TINY,
  )
  model = task.build_model()
  # Spread the random head's scores so that float round-off between batch
  # shapes cannot reorder near-tied spans.
  for weight in model.span_head.weights:
    if "kernel" in weight.name:
      weight.assign(weight * 40.0)
  with helpers.eagerly():  # The reference, untraced.
    examples, features, outputs = task.predict(model, "dev")
  windows = [
      sum(f["squad_feature"].example_index == i for f in features)
      for i in range(len(examples))
  ]
  assert max(windows) >= 4 and min(windows) == 1  # long, short and empty
  task.write_predictions("dev", examples, features, outputs, str(tmp_path))
  with open(tmp_path / "predictions.json") as f:
    predictions = json.load(f)
  module = task.serving_module(model, task.preprocessor())
  served = module.serve(tf.constant(questions), tf.constant(contexts))
  answers = [a.decode() for a in served["answer"].numpy()]
  assert answers == [predictions[f"q{k}"] for k in range(len(questions))]
  assert sum(bool(a) for a in answers) >= len(answers) // 2
  inside_words = 0
  for k, answer in enumerate(answers):  # word and character offsets
    first, last = served["start_word"][k], served["end_word"][k]
    start, end = int(served["start_char"][k]), int(served["end_char"][k])
    if not answer:
      assert first == last == start == end == -1
      continue
    assert contexts[k][start:end] == answer  # the context's own characters
    words = [m.span() for m in re.finditer("[^ \t\r\n\u202f]+", contexts[k])]
    assert words[first][0] <= start < words[first][1]
    assert words[last][0] < end <= words[last][1]
    inside_words += start != words[first][0] or end != words[last][1]
  assert inside_words  # some spans start or end inside a word
  assert any(
      not c.isascii()
      for k, a in enumerate(answers)
      if a
      for c in contexts[k][: int(served["start_char"][k])]
  )
  with pytest.raises(
      tf.errors.InvalidArgumentError,
      match="question and context must hold the same number",
  ):
    module.serve(tf.constant(questions[:2]), tf.constant(contexts[:1]))
  if version == "1.1":  # the module is the same for 2.0
    saved = tmp_path / "saved_model"
    tf.saved_model.save(module, str(saved), signatures=module.signatures())
    hostile.assert_answers_everything(saved, ["serving_default"])
  if version == "2.0":
    with open(tmp_path / "null_odds.json") as f:
      odds = json.load(f)
    np.testing.assert_allclose(
        served["null_odds"].numpy(),
        [odds[f"q{k}"] for k in range(len(questions))],
        rtol=1e-4,
        atol=1e-4,
    )


@pytest.mark.slow
def test_wordpiece_chinese_answers_are_character_exact(tmp_path):
  # Chinese contexts have no spaces: a SQuAD "word" is a whole sentence,
  # and the answer's characters come from the pieces' character spans in
  # it (WordPiecePreprocessor.piece_char_spans in the graph,
  # WordPieceTokenizer.piece_char_spans in Python).
  chinese = os.path.join(helpers.REPO, "tests", "testdata", "chinese")
  with open(os.path.join(chinese, "corpus.txt"), encoding="utf-8") as f:
    sentences = [l.strip() for l in f if re.search("[\u4e00-\u9fff]", l)]
  rng = random.Random(5)
  contexts = [
      "".join(rng.sample(sentences, rng.randint(1, 3))) for _ in range(8)
  ]
  questions = [rng.choice(sentences)[:8] for _ in contexts]
  data = {
      "version": "1.1",
      "data": [
          {
              "title": "t",
              "paragraphs": [
                  {
                      "context": c,
                      "qas": [{"id": f"q{k}", "question": q, "answers": []}],
                  }
                  for k, (q, c) in enumerate(zip(questions, contexts))
              ],
          }
      ],
  }
  (tmp_path / "dev-v1.1.json").write_text(json.dumps(data, ensure_ascii=False))
  tf.random.set_seed(1)
  task = SquadTask(
      data_dir=str(tmp_path),
      vocab_file=os.path.join(chinese, "vocab.txt"),
      version="1.1",
      seq_length=48,
      doc_stride=16,
      max_query_length=8,
      n_best_size=64,
      max_answer_length=6,
      model_config=TINY.replace(vocab_size=1448),
  )
  model = task.build_model()
  # Weights from a seeded generator, not from TensorFlow's random state,
  # which depends on what ran before in the test process: a model of other
  # weights can have spans of nearly equal score, which the two decoders
  # may order differently.
  weights_rng = np.random.default_rng(3)
  span_head = {id(w) for w in model.span_head.weights}
  for weight in model.weights:
    values = weights_rng.normal(0.0, 0.02, weight.shape)
    if "gamma" in weight.name:
      values = np.ones(weight.shape)
    elif "beta" in weight.name or "bias" in weight.name:
      values = np.zeros(weight.shape)
    if "kernel" in weight.name and id(weight) in span_head:
      values *= 40.0
    weight.assign(values.astype(weight.dtype.as_numpy_dtype))
  with helpers.eagerly():  # The reference, untraced.
    examples, features, outputs = task.predict(model, "dev")
  task.write_predictions("dev", examples, features, outputs, str(tmp_path))
  with open(tmp_path / "predictions.json", encoding="utf-8") as f:
    predictions = json.load(f)
  module = task.serving_module(model, task.preprocessor())
  served = module.serve(tf.constant(questions), tf.constant(contexts))
  answers = [a.decode() for a in served["answer"].numpy()]
  assert answers == [predictions[f"q{k}"] for k in range(len(questions))]
  inside = 0
  for k, answer in enumerate(answers):
    start, end = int(served["start_char"][k]), int(served["end_char"][k])
    assert answer and contexts[k][start:end] == answer
    inside += start > 0 and end < len(contexts[k])
  assert inside  # spans start and end inside the one "word" of a sentence
