"""RACE fine-tuning end to end, on a learnable synthetic RACE.

The synthetic RACE is in the download's layout (one JSON per article); the
tests cover the in-graph packing against the Python features, training,
per-level accuracy, predictions and fresh-process serving.
"""

import json
import os
import random
import types

import numpy as np
import pytest
import tensorflow as tf

from albert.finetuning import training as finetuning
from albert.finetuning.race.task import RaceServingModule, RaceTask
from albert.finetuning.race.task import question_with_option
from tests.albert.finetuning import finetune_helpers as helpers

# The article names a topic; the answer is the one option from that topic.
TOPICS = {
    "colours": "red blue green black white".split(),
    "sizes": "small large long short big".split(),
    "actions": "read write open close run".split(),
    "things": "file list name value string".split(),
}
QUESTIONS = ("which word fits the text ?", "the text is about _ .")
FILLER = "the of a and in to is for this with".split()


def write_race(root, seed=0, sizes=(("train", 300), ("dev", 20), ("test", 5))):
  """RACE.tar.gz's layout: SPLIT/LEVEL/N.txt, one article of 4 questions each.

  Each article names a topic among filler words; the answer is the one
  option from that topic, the others come from the other topics.
  """
  rng = random.Random(seed)
  for split, articles in sizes:
    for level in ("middle", "high"):
      folder = os.path.join(root, split, level)
      os.makedirs(folder, exist_ok=True)
      for n in range(articles // 2):
        topic = rng.choice(sorted(TOPICS))
        words = rng.sample(FILLER, 5)
        words.insert(rng.randint(0, 5), f"about {topic}")
        record = {
            "id": f"{level}{n}.txt",
            "article": " ".join(words) + " .",
            "questions": [],
            "options": [],
            "answers": [],
        }
        for _ in range(4):
          others = [t for t in sorted(TOPICS) if t != topic]
          wrong = [rng.choice(TOPICS[t]) for t in others]
          answer = rng.randrange(4)
          record["options"].append(
              wrong[:answer] + [rng.choice(TOPICS[topic])] + wrong[answer:]
          )
          record["answers"].append("ABCD"[answer])
          record["questions"].append(rng.choice(QUESTIONS))
        with open(os.path.join(folder, record["id"]), "w") as f:
          json.dump(record, f)


def test_question_with_option_fills_every_blank():
  assert (
      question_with_option("Tom was _ and _ .", "ill")
      == "Tom was ill and ill ."
  )
  assert (
      question_with_option("Where was Tom?", "at home")
      == "Where was Tom? at home"
  )


def test_serving_packing_equals_the_python_features(tmp_path, spm_model):
  """Blank filling, qa truncation from the front, article cut to fit."""
  task = RaceTask(
      data_dir=str(tmp_path),
      spm_model_file=spm_model,
      seq_length=24,
      max_qa_length=7,
      model_config=helpers.TINY,
  )
  examples = [
      _example(
          "a long article about the file name and the list of values "
          "with more words than fit",
          "the word _ is where ?",
          ["file", "an object in each class for this", "x", "the list"],
      ),
      _example(
          "short text",
          "which word is in the text ?",
          ["red", "blue", "green", "the function returns a value"],
      ),
  ]
  features = list(task.featurize(examples, training=False))
  no_model = types.SimpleNamespace(variables=[])  # packing only
  module = RaceServingModule(no_model, task.preprocessor(), max_qa_length=7)
  packed = module._pack_options(
      tf.constant([e.context for e in examples]),
      tf.constant([e.question for e in examples]),
      tf.constant([list(e.options) for e in examples]),
  )
  for name in ("input_word_ids", "input_mask", "input_type_ids"):
    want = np.stack([f[name] for f in features])
    np.testing.assert_array_equal(packed[name].numpy(), want, err_msg=name)
  # Something was truncated on both sides, so the test means something.
  assert features[0]["input_mask"].sum(-1).max() == 24
  assert features[1]["input_type_ids"][3].sum() == 8  # 7 qa tokens + [SEP]
  with pytest.raises(
      tf.errors.InvalidArgumentError,
      match="article and options must hold the same number",
  ):
    module._pack_options(
        tf.constant([examples[0].context]),
        tf.constant([examples[0].question]),
        tf.constant([list(e.options) for e in examples]),
    )


def _example(context, question, options, label=0):
  from albert.finetuning.text_example import MultipleChoiceExample

  return MultipleChoiceExample(
      guid="g",
      context=context,
      question=question,
      options=tuple(options),
      label=label,
      group="high",
  )


@pytest.mark.slow
def test_race_trains_evaluates_predicts_and_serves(tmp_path, spm_model):
  data_dir = str(tmp_path / "RACE")
  write_race(data_dir)
  init = helpers.init_checkpoint(tmp_path / "init")
  model_dir = str(tmp_path / "race")
  params = [
      "RaceTask.seq_length = 32",
      "RaceTask.max_qa_length = 16",
      "RaceTask.global_batch_size = 16",
      "OptimizerConfig.learning_rate = 1e-3",
      "OptimizerConfig.warmup_steps = 30",
      "TRAIN_STEPS = 500",
      "EVAL_INTERVAL = 250",  # the dev protocol's own tests are elsewhere
  ]
  common = dict(
      model_dir=model_dir, data_dir=data_dir, spm_model_file=spm_model
  )
  results = helpers.finetune(
      "train_and_eval",
      "gin/finetune/race.gin",
      params,
      init_checkpoint=init,
      **common,
  )
  assert results["dev/accuracy"] >= 0.9, results
  assert set(results) == {
      "dev/accuracy",
      "dev/accuracy_middle",
      "dev/accuracy_high",
      "best_checkpoint_step",
  }
  # 40 dev questions, 20 per level: "all" is the mean of the levels.
  assert results["dev/accuracy"] == pytest.approx(
      (results["dev/accuracy_middle"] + results["dev/accuracy_high"]) / 2
  )

  helpers.finetune("predict", "gin/finetune/race.gin", params, **common)
  with open(os.path.join(model_dir, "predictions", "RACE_test.json")) as f:
    predictions = json.load(f)
  assert len(predictions) == 2 * 2 * 4  # 2 articles per level, 4 questions
  first = predictions["test-middle-middle0.txt-0"]
  assert first["answer"] in "ABCD"
  assert sum(first["probabilities"]) == pytest.approx(1.0, abs=1e-5)

  export_dir = str(tmp_path / "race_export")
  helpers.finetune(
      "export", "gin/finetune/race.gin", params, export_dir=export_dir, **common
  )
  # The served answers to the raw test questions are the predicted ones.
  guids, request = [], {"article": [], "question": [], "options": []}
  for level in ("middle", "high"):
    for n in range(2):
      with open(os.path.join(data_dir, "test", level, f"{level}{n}.txt")) as f:
        record = json.load(f)
      for q, (question, options) in enumerate(
          zip(record["questions"], record["options"])
      ):
        guids.append(f"test-{level}-{level}{n}.txt-{q}")
        request["article"].append(record["article"])
        request["question"].append(question)
        request["options"].append(options)
  out = helpers.call_saved_model(export_dir, request)
  assert ["ABCD"[a] for a in out["answer"]] == [
      predictions[g]["answer"] for g in guids
  ]
  np.testing.assert_allclose(
      out["probabilities"],
      [predictions[g]["probabilities"] for g in guids],
      atol=1e-4,
  )
  np.testing.assert_allclose(np.sum(out["probabilities"], -1), 1.0, rtol=1e-5)


def test_recipe_keeps_the_originals_classifier_dropout(tmp_path, spm_model):
  # run_race.py --dropout_prob defaults to 0.1 on the pooled output; the
  # README's "ALBERT DR 0" is the encoder's dropout (0 in the v2 configs).
  task = finetuning.build_task(
      gin_file=["gin/finetune/race.gin"],
      gin_param=helpers.TINY_GIN
      + ["RaceTask.seq_length = 64", "RaceTask.max_qa_length = 16"],
      data_dir=str(tmp_path),
      spm_model_file=spm_model,
  )
  model = task.build_model()
  assert task.dropout_rate == 0.1
  assert model.dropout.rate == 0.1
