"""GLUE fine-tuning end to end: a learnable synthetic SST-2 written in the
official TSV format, trained from a tiny init checkpoint, evaluated,
predicted into the submission file, exported and served in a fresh process."""

import csv
import json
import os
import random

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text as tf_text

from official.core import best_checkpoint
from albert.finetuning import feature_cache
from albert.finetuning.glue.task import GlueTask
from albert.finetuning.sentence_classification import truncate_pair
from albert.finetuning.text_example import TextExample
from tests.albert.finetuning import finetune_helpers as helpers

FILLER = (
    "the file name is a string of the module and the list of values "
    "with an object in each class for this function"
).split()
CUES = {"1": "true", "0": "false"}


def _sentence(rng, label):
  words = rng.sample(FILLER, rng.randint(4, 9))
  words.insert(rng.randint(0, len(words)), CUES[label])
  return " ".join(words)


def write_sst2(root, seed=0, n_train=600, n_dev=100, n_test=20):
  """SST-2: `sentence\tlabel` (train, dev), `index\tsentence` (test)."""
  rng = random.Random(seed)
  folder = os.path.join(root, "SST-2")
  os.makedirs(folder, exist_ok=True)
  for split, n in (("train", n_train), ("dev", n_dev)):
    with open(os.path.join(folder, f"{split}.tsv"), "w") as f:
      f.write("sentence\tlabel\n")
      for _ in range(n):
        label = rng.choice("01")
        f.write(f"{_sentence(rng, label)}\t{label}\n")
  test_labels = [rng.choice("01") for _ in range(n_test)]
  with open(os.path.join(folder, "test.tsv"), "w") as f:
    f.write("index\tsentence\n")
    for i, label in enumerate(test_labels):
      f.write(f"{i}\t{_sentence(rng, label)}\n")
  return test_labels


def _longest_first(a, b, budget):
  """The original `_truncate_seq_pair`, as a loop."""
  a, b = list(a), list(b)
  while len(a) + len(b) > budget:
    if len(a) > len(b):
      a.pop()
    else:
      b.pop()
  return a, b


@pytest.mark.slow
def test_truncate_pair_equals_the_original_loop_and_tf_text():
  cases = [
      (la, lb, budget)
      for la in range(9)
      for lb in range(9)
      for budget in range(1, 14)
  ]
  firsts, seconds = [], []
  for la, lb, budget in cases:
    a, b = list(range(la)), list(range(100, 100 + lb))
    want = _longest_first(a, b, budget)
    assert truncate_pair(a, b, budget) == want, (la, lb, budget)
    firsts.append(a)
    seconds.append(b)
  # TF-Text's trimmer (what the serving SavedModel runs), budget by budget.
  for budget in range(1, 14):
    rows = [i for i, c in enumerate(cases) if c[2] == budget]
    trimmed = tf_text.RoundRobinTrimmer(max_seq_length=budget).trim(
        [
            tf.ragged.constant(
                [firsts[i] for i in rows], tf.int64, row_splits_dtype=tf.int64
            ),
            tf.ragged.constant(
                [seconds[i] for i in rows], tf.int64, row_splits_dtype=tf.int64
            ),
        ]
    )
    for k, i in enumerate(rows):
      want = truncate_pair(firsts[i], seconds[i], budget)
      assert (
          trimmed[0][k].numpy().tolist(),
          trimmed[1][k].numpy().tolist(),
      ) == want, cases[i]


def test_feature_cache_converts_once_and_resumes_exactly(tmp_path):
  spec = {"x": tf.TensorSpec([3], tf.int32), "y": tf.TensorSpec([], tf.float32)}
  calls = []

  def make():
    calls.append(1)
    return ({"x": [i, i + 1, i + 2], "y": i / 2} for i in range(20))

  key = {"seq_length": 3}
  digest = feature_cache.cache_digest(key, ["a", "b"])
  assert digest != feature_cache.cache_digest({"seq_length": 4}, ["a", "b"])
  assert digest != feature_cache.cache_digest(key, ["a", "c"])
  path, count = feature_cache.cached_features(
      str(tmp_path), "t", digest, make, spec
  )
  again = feature_cache.cached_features(str(tmp_path), "t", digest, make, spec)
  assert (count, again, len(calls)) == (20, (path, 20), 1)
  assert not [f for f in os.listdir(tmp_path) if ".tmp" in f]

  def stream(skip):
    dataset = feature_cache.record_dataset(
        path,
        spec,
        batch_size=4,
        training=True,
        seed=3,
        skip_examples=skip,
        shuffle_buffer_size=8,
    )
    return [b["x"].numpy()[:, 0].tolist() for b in dataset.take(6)]

  full = sum(stream(0), [])  # 24 examples over more than one epoch of 20
  assert full[:20] != list(range(20))  # shuffled
  assert sum(stream(8), [])[:16] == full[8:]  # resumed after 2 batches
  batch = next(
      iter(
          feature_cache.record_dataset(
              path, spec, batch_size=20, training=False
          )
      )
  )
  np.testing.assert_array_equal(batch["x"].numpy()[:, 1], np.arange(1, 21))
  assert batch["x"].dtype == tf.int32 and batch["y"].dtype == tf.float32


@pytest.mark.slow
def test_sst2_trains_evaluates_predicts_and_serves(tmp_path, spm_model):
  data_dir = str(tmp_path / "glue")
  test_labels = write_sst2(data_dir)
  init = helpers.init_checkpoint(tmp_path / "init")
  model_dir = str(tmp_path / "sst2")
  params = [
      "GlueTask.seq_length = 32",
      "GlueTask.global_batch_size = 32",
      "OptimizerConfig.learning_rate = 1e-4",
      "OptimizerConfig.warmup_steps = 20",
      "TRAIN_STEPS = 200",
      "TrainerConfig.checkpoint_interval = 100",
  ]
  common = dict(
      model_dir=model_dir, data_dir=data_dir, spm_model_file=spm_model
  )
  results = helpers.finetune(
      "train_and_eval",
      "gin/finetune/sst2.gin",
      params,
      init_checkpoint=init,
      **common,
  )
  assert results["dev/accuracy"] >= 0.9, results
  assert os.path.exists(os.path.join(model_dir, "ckpt-200.index"))
  # The dev protocol: evaluated at steps 100 and 200, the best reported.
  history = best_checkpoint.read_history(model_dir)
  assert [e["step"] for e in history] == [100, 200]
  first_best = max(history, key=lambda e: e["dev/accuracy"])  # first on ties
  assert results == pytest.approx(
      {
          "dev/accuracy": first_best["dev/accuracy"],
          "best_checkpoint_step": first_best["step"],
      }
  )
  with open(os.path.join(model_dir, "eval_results.json")) as f:
    assert json.load(f) == pytest.approx(results)
  # The cached training features are reused by a second task object.
  cache = os.listdir(os.path.join(data_dir, "cache"))
  assert len([f for f in cache if f.endswith(".tfrecord")]) == 1

  # eval mode reproduces the best's metrics from its weights alone.
  again = helpers.finetune("eval", "gin/finetune/sst2.gin", params, **common)
  assert again == pytest.approx(helpers.eval_of_best(results))
  # Every kept checkpoint, and the best one (by accuracy, the first on ties).
  best = helpers.finetune(
      "eval", "gin/finetune/sst2.gin", params, checkpoint="all", **common
  )
  with open(os.path.join(model_dir, "eval_all_checkpoints.json")) as f:
    every = json.load(f)
  assert sorted(every) == ["ckpt-100", "ckpt-200"]
  for entry in history:
    assert every[f"ckpt-{entry['step']}"] == pytest.approx(
        {"dev/accuracy": entry["dev/accuracy"]}
    )
  assert best == pytest.approx(results)

  helpers.finetune("predict", "gin/finetune/sst2.gin", params, **common)
  with open(os.path.join(model_dir, "predictions", "SST-2.tsv")) as f:
    rows = list(csv.reader(f, delimiter="\t"))
  assert rows[0] == ["index", "prediction"]
  assert [r[0] for r in rows[1:]] == [str(i) for i in range(len(test_labels))]
  predicted = [r[1] for r in rows[1:]]
  assert np.mean([p == t for p, t in zip(predicted, test_labels)]) >= 0.85

  export_dir = str(tmp_path / "sst2_export")
  helpers.finetune(
      "export", "gin/finetune/sst2.gin", params, export_dir=export_dir, **common
  )
  sentences = [
      "the module is true",
      "a false list of values",
      "the file name is false",
      "true",
  ]
  out = helpers.call_saved_model(export_dir, {"text_a": sentences})
  assert out["label"] == ["1", "0", "0", "1"]
  probabilities = np.array(out["probabilities"])
  np.testing.assert_allclose(probabilities.sum(-1), 1.0, rtol=1e-5)
  assert out["label_id"] == np.argmax(probabilities, -1).tolist()
  # The original classifier export's signature: serialized tf.Examples.
  task = GlueTask(
      task_name="sst2",
      spm_model_file=spm_model,
      seq_length=32,
      model_config=helpers.TINY,
  )
  examples = [
      TextExample(guid=str(i), text_a=t, text_b=None, label=None)
      for i, t in enumerate(sentences)
  ]
  records = [
      tf.train.Example(
          features=tf.train.Features(
              feature={
                  name: tf.train.Feature(
                      int64_list=tf.train.Int64List(value=f[key])
                  )
                  for name, key in (
                      ("input_ids", "input_word_ids"),
                      ("input_mask", "input_mask"),
                      ("segment_ids", "input_type_ids"),
                  )
              }
          )
      ).SerializeToString()
      for f in task.featurize(examples, training=False)
  ]
  by_example = helpers.call_saved_model(
      export_dir,
      {"examples": records},
      signature="tf_example",
      binary=["examples"],
  )
  assert by_example["predictions"] == out["label_id"]
  np.testing.assert_allclose(
      by_example["probabilities"], probabilities, atol=1e-5
  )


def test_bad_inputs_fail_with_one_line(tmp_path, spm_model):
  data_dir = str(tmp_path / "glue")
  write_sst2(data_dir, n_train=4, n_dev=2, n_test=1)
  common = dict(
      model_dir=str(tmp_path / "m"), data_dir=data_dir, spm_model_file=spm_model
  )
  with pytest.raises(ValueError, match="max_position_embeddings=128"):
    helpers.finetune("train", "gin/finetune/sst2.gin", [], **common)
  with pytest.raises(ValueError, match="vocab_size is 8000"):
    helpers.finetune(
        "train",
        "gin/finetune/sst2.gin",
        ["AlbertConfig.vocab_size = 8000", "GlueTask.seq_length = 32"],
        **common,
    )
  with pytest.raises(ValueError, match="predicted by the mnli model"):
    helpers.finetune(
        "train",
        "gin/finetune/sst2.gin",
        ["GlueTask.task_name = 'ax'", "GlueTask.seq_length = 32"],
        **common,
    )
  with pytest.raises(
      ValueError, match=r"m not found \(.*m.index does not exist\)"
  ):
    helpers.finetune(
        "eval", "gin/finetune/sst2.gin", ["GlueTask.seq_length = 32"], **common
    )
  with pytest.raises(
      ValueError,
      match=r"--spm_model_file \(the SentencePiece model of pretraining\) or "
      "--vocab_file",
  ):
    helpers.finetune(
        "train",
        "gin/finetune/sst2.gin",
        ["GlueTask.seq_length = 32"],
        model_dir=common["model_dir"],
        data_dir=data_dir,
    )
  with pytest.raises(ValueError, match="needs --export_dir"):
    helpers.finetune("export", "gin/finetune/sst2.gin", [], **common)


def _write_tsv(path, header, rows):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, "w") as f:
    for row in [header] + rows:
      f.write("\t".join(row) + "\n")


def write_mnli_and_ax(root, rng, n=16):
  """MNLI's five files (train 12 columns, dev 16, test 10) and AX."""
  labels = ("contradiction", "entailment", "neutral")
  pair = lambda: (_sentence(rng, "1"), _sentence(rng, "0"))
  for split, width in (
      ("train", 12),
      ("dev_matched", 16),
      ("dev_mismatched", 16),
  ):
    rows = []
    for i in range(n):
      a, b = pair()
      rows.append(
          [str(i)] + ["x"] * 7 + [a, b] + ["y"] * (width - 11) + [labels[i % 3]]
      )
    _write_tsv(
        os.path.join(root, "MNLI", f"{split}.tsv"),
        [f"h{k}" for k in range(width)],
        rows,
    )
  for split in ("test_matched", "test_mismatched"):
    _write_tsv(
        os.path.join(root, "MNLI", f"{split}.tsv"),
        [f"h{k}" for k in range(10)],
        [[str(100 + i)] + ["x"] * 7 + list(pair()) for i in range(5)],
    )
  _write_tsv(
      os.path.join(root, "diagnostic", "diagnostic.tsv"),
      ["index", "sentence1", "sentence2"],
      [[str(i), *pair()] for i in range(3)],
  )


@pytest.mark.slow
def test_mnli_writes_matched_mismatched_and_ax_submissions(tmp_path, spm_model):
  data_dir = str(tmp_path / "glue")
  write_mnli_and_ax(data_dir, random.Random(1))
  model_dir = str(tmp_path / "mnli")
  params = [
      "GlueTask.seq_length = 32",
      "GlueTask.global_batch_size = 8",
      "OptimizerConfig.warmup_steps = 1",
      "TRAIN_STEPS = 2",
  ]
  common = dict(
      model_dir=model_dir, data_dir=data_dir, spm_model_file=spm_model
  )
  results = helpers.finetune(
      "train_and_eval", "gin/finetune/mnli.gin", params, **common
  )
  assert set(results) == {
      "dev_matched/accuracy",
      "dev_mismatched/accuracy",
      "best_checkpoint_step",
  }
  # During training only the first dev split is evaluated (it selects); the
  # best checkpoint is then evaluated on the other.
  for entry in best_checkpoint.read_history(model_dir):
    assert set(entry) == {"step", "dev_matched/accuracy"}
  helpers.finetune("predict", "gin/finetune/mnli.gin", params, **common)
  predictions = os.path.join(model_dir, "predictions")
  assert sorted(os.listdir(predictions)) == [
      "AX.tsv",
      "MNLI-m.tsv",
      "MNLI-mm.tsv",
  ]
  with open(os.path.join(predictions, "MNLI-mm.tsv")) as f:
    rows = list(csv.reader(f, delimiter="\t"))
  assert [r[0] for r in rows[1:]] == [str(100 + i) for i in range(5)]
  assert {r[1] for r in rows[1:]} <= {"contradiction", "entailment", "neutral"}
  with open(os.path.join(predictions, "AX.tsv")) as f:
    assert len(f.read().splitlines()) == 4


@pytest.mark.slow
def test_stsb_regression_reports_correlations_and_serves_a_score(
    tmp_path, spm_model
):
  data_dir = str(tmp_path / "glue")
  rng = random.Random(2)
  for split in ("train", "dev"):
    rows = [
        [str(i)]
        + ["x"] * 6
        + [_sentence(rng, "1"), _sentence(rng, "0"), f"{i % 6 * 0.9:.2f}"]
        for i in range(12)
    ]
    _write_tsv(
        os.path.join(data_dir, "STS-B", f"{split}.tsv"),
        [f"h{k}" for k in range(10)],
        rows,
    )
  model_dir = str(tmp_path / "stsb")
  params = [
      "GlueTask.seq_length = 32",
      "GlueTask.global_batch_size = 4",
      "OptimizerConfig.warmup_steps = 1",
      "TRAIN_STEPS = 2",
  ]
  common = dict(
      model_dir=model_dir, data_dir=data_dir, spm_model_file=spm_model
  )
  results = helpers.finetune(
      "train_and_eval", "gin/finetune/stsb.gin", params, **common
  )
  assert set(results) == {
      "dev/pearson",
      "dev/spearman",
      "dev/corr",
      "best_checkpoint_step",
  }
  assert results["dev/corr"] == pytest.approx(
      (results["dev/pearson"] + results["dev/spearman"]) / 2
  )
  export_dir = str(tmp_path / "stsb_export")
  helpers.finetune(
      "export", "gin/finetune/stsb.gin", params, export_dir=export_dir, **common
  )
  out = helpers.call_saved_model(
      export_dir, {"text_a": ["a b", ""], "text_b": ["c", "d e"]}
  )
  assert list(out) == ["score"] and len(out["score"]) == 2


def test_serving_preprocessor_checks_the_sentencepiece_model(spm_model):
  # The export path builds the serving tokenizer: it must refuse what the
  # training path refuses, not ship a SavedModel with the wrong vocabulary.
  task = GlueTask(
      task_name="sst2",
      spm_model_file=None,
      seq_length=32,
      model_config=helpers.TINY,
  )
  with pytest.raises(
      ValueError,
      match=r"--spm_model_file \(the SentencePiece model of pretraining\) or "
      "--vocab_file",
  ):
    task.preprocessor()
  task = GlueTask(
      task_name="sst2",
      spm_model_file=spm_model,
      seq_length=32,
      model_config=helpers.TINY.replace(vocab_size=8000),
  )
  with pytest.raises(
      ValueError, match="entries but AlbertConfig.vocab_size is 8000"
  ):
    task.preprocessor()
  task = GlueTask(
      task_name="sst2",
      spm_model_file=spm_model,
      seq_length=32,
      model_config=helpers.TINY,
  )
  assert (
      int(task.preprocessor().tokenizer.vocab_size()) == helpers.TINY.vocab_size
  )
