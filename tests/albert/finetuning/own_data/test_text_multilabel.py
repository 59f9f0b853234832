"""Multi-label classification on own files: the label-set rules, metrics and
thresholds against scikit-learn and brute force, and a learnable synthetic
task end to end (train, eval, predict, serve, transformers)."""

import csv
import json
import os
import random

import numpy as np
import pytest

from albert.finetuning import training as finetuning
from albert.finetuning import multilabel_metrics
from albert.finetuning.own_data.text_multilabel import TextMultiLabelTask
from albert.finetuning.text_example import TextExample
from official.core import best_checkpoint
from official.errors import InputError
from tests.albert.serving import hostile
from tests import helpers as test_helpers
from tests.albert.finetuning import finetune_helpers as helpers

GIN = "gin/finetune/text_multilabel.gin"
FILLER = (
    "the file name is a string of the module and the list of values "
    "with an object in each class for this function"
).split()
CUES = {"sports": "match", "politics": "vote", "science": "atom"}


def test_metrics_match_scikit_learn():
  from sklearn import metrics  # test-only reference

  rng = np.random.default_rng(0)
  for trial in range(20):
    # Two labels or more: scikit-learn reads one column as a binary task.
    n, labels = rng.integers(1, 30), rng.integers(2, 6)
    gold = rng.random((n, labels)) < rng.random()
    predicted = rng.random((n, labels)) < rng.random()
    if trial % 4 == 0:
      gold[:, 0] = predicted[:, 0] = False  # a label nobody has
    got = multilabel_metrics.multilabel_metrics(predicted, gold)
    for average in ("micro", "macro"):
      want = metrics.f1_score(gold, predicted, average=average, zero_division=0)
      assert got[f"{average}_f1"] == pytest.approx(want), (trial, average)
    assert got["subset_accuracy"] == pytest.approx(
        metrics.accuracy_score(gold, predicted)
    )


def test_macro_f1_thresholds_are_each_labels_best_nearest_one_half():
  rng = np.random.default_rng(1)
  probabilities = rng.random((40, 4))
  gold = rng.random((40, 4)) < probabilities  # informative probabilities
  gold[:, 3] = False  # never present: F1 is 0 everywhere, 0.5 is kept
  probabilities[:, 3] = 0.01
  # macro-F1 is the mean of each label's F1: each label's own best.
  tuned = multilabel_metrics.tune_thresholds(probabilities, gold, "macro_f1")
  for label in range(4):
    scores = {
        t: multilabel_metrics.label_f1(
            probabilities[:, [label]] >= t, gold[:, [label]]
        )[0]
        for t in multilabel_metrics.THRESHOLD_GRID
    }
    best = max(scores.values())
    ties = [t for t, s in scores.items() if s == best]
    assert tuned[label] == min(ties, key=lambda t: (abs(t - 0.5), t))
  assert tuned[3] == 0.5


def _skewed(seed=0, n=400):
  """Three labels, positives about 54%, 12% and 3% of the texts. The two
  common labels are well separated around 0.5; the rare one's positives
  get 0.05-0.3, as do 15% of its negatives (the rest below 0.05), as a
  model that has seen few examples of it gives them."""
  rng = np.random.default_rng(seed)
  gold = rng.random((n, 3)) < [0.54, 0.12, 0.03]
  probabilities = np.clip(
      np.where(gold[:, :2], 0.8, 0.2) + rng.normal(0.0, 0.15, (n, 2)),
      0.001,
      0.999,
  )
  confusable = gold[:, 2] | (rng.random(n) < 0.15)
  rare = np.where(
      confusable, rng.uniform(0.05, 0.3, n), rng.uniform(0.0, 0.049, n)
  )
  return np.column_stack([probabilities, rare]), gold


def test_thresholds_tuned_for_micro_f1_never_fall_below_one_half():
  # Tuning each label for its own F1 (the old rule, macro_f1's optimum)
  # lowers the rare label's threshold and micro-F1 with it; tuning for
  # micro-F1 does not.
  probabilities, gold = _skewed()
  metric = multilabel_metrics.multilabel_metrics

  def micro(thresholds):
    return metric(probabilities >= thresholds, gold)["micro_f1"]

  per_label = multilabel_metrics.tune_thresholds(
      probabilities, gold, "macro_f1"
  )
  assert per_label[2] <= 0.2  # the rare label's own best
  assert micro(per_label) < micro(0.5) - 0.01  # today's fall
  tuned = multilabel_metrics.tune_thresholds(probabilities, gold, "micro_f1")
  assert micro(tuned) >= micro(0.5)
  assert micro(tuned) > micro(per_label)


@pytest.mark.parametrize("name", multilabel_metrics.METRIC_NAMES)
def test_tuned_thresholds_are_a_coordinate_optimum(name):
  # Brute force: no single label's grid value raises the metric further,
  # and the metric is at least its 0.5 value.
  for seed in range(3):
    probabilities, gold = _skewed(seed, n=120)
    tuned = multilabel_metrics.tune_thresholds(probabilities, gold, name)

    def value(thresholds, probabilities=probabilities, gold=gold):
      return multilabel_metrics.multilabel_metrics(
          probabilities >= thresholds, gold
      )[name]

    best = value(tuned)
    assert best >= value(0.5)
    for label in range(3):
      for t in multilabel_metrics.THRESHOLD_GRID:
        moved = tuned.copy()
        moved[label] = t
        assert value(moved) <= best + 1e-12, (seed, label, t)


def _task(**kwargs):
  return TextMultiLabelTask(label_column="labels", **kwargs)


def _write(path, rows):
  if path.endswith(".jsonl"):
    with open(path, "w") as f:
      f.writelines(json.dumps(row) + "\n" for row in rows)
    return
  with open(path, "w", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)


def test_label_sets_from_lists_and_delimited_fields(tmp_path):
  data = tmp_path / "data"
  data.mkdir()
  _write(
      str(data / "train.jsonl"),
      [
          {"text": "a", "labels": ["x", "y"]},
          {"text": "b", "labels": []},  # no label: a valid example
          {"text": "c", "labels": [" y ", "y", "z"]},  # y once
      ],
  )
  _write(
      str(data / "dev.csv"),
      [{"text": "d", "labels": "x|z"}, {"text": "e", "labels": ""}],
  )
  task = _task(data_dir=str(data))
  train = task.read_examples("train")
  assert [e.label for e in train] == [("x", "y"), (), ("y", "z")]
  assert task.labels == ("x", "y", "z")
  assert [e.label for e in task.read_examples("dev")] == [("x", "z"), ()]
  np.testing.assert_array_equal(task._label(("x", "z")), [1, 0, 1])
  np.testing.assert_array_equal(task._label(None), [0, 0, 0])


@pytest.mark.parametrize(
    "dev,message",
    [
        ('{"text": "d", "labels": ["w"]}', "row 0 has label 'w', not one of"),
        (
            '{"text": "c", "labels": []}\n{"text": "d"}',
            "line 2: no 'labels' field; write \\[\\] .* for a text",
        ),
        ('{"text": "d", "labels": [{"a": 1}]}', "list label names"),
        ('{"text": "d", "labels": 3}', "is a JSON int; write a list"),
        ('{"text": "d", "labels": "x||y"}', "has an empty label name"),
    ],
)
def test_bad_label_sets_are_one_line(tmp_path, dev, message):
  data = tmp_path / "data"
  data.mkdir()
  _write(str(data / "train.jsonl"), [{"text": "a", "labels": ["x", "y"]}])
  (data / "dev.jsonl").write_text(dev + "\n")
  task = _task(data_dir=str(data))
  task.read_examples("train")
  with pytest.raises(InputError, match=message) as e:
    task.read_examples("dev")
  assert "\n" not in str(e.value)


def test_a_listed_label_holding_the_delimiter_is_refused():
  with pytest.raises(InputError, match="'a|b' contains the label delimiter"):
    _task(labels=["a|b", "c"])
  assert _task(labels=["a|b", "c"], label_delimiter=";").labels == ("a|b", "c")
  with pytest.raises(InputError, match="label_delimiter=' '"):
    _task(label_delimiter=" ")


def _sentence(rng, names):
  words = rng.sample(FILLER, rng.randint(4, 8))
  for name in names:
    words.insert(rng.randint(0, len(words)), CUES[name])
  return " ".join(words)


def write_multilabel_csv(folder, seed=0, n_train=400, n_dev=100, n_test=12):
  """train/dev/test.csv: `id`, `text`, `labels` ('|'-joined; each label on
  a text with probability 0.4, its cue word in the text)."""
  rng = random.Random(seed)
  os.makedirs(folder, exist_ok=True)
  test_sets = []
  for split, n in (("train", n_train), ("dev", n_dev), ("test", n_test)):
    rows = []
    for i in range(n):
      names = [k for k in sorted(CUES) if rng.random() < 0.4]
      rows.append(
          {
              "id": f"{split}-{i}",
              "text": _sentence(rng, names),
              "labels": "|".join(names),
          }
      )
      if split == "test":
        test_sets.append(set(names))
    _write(os.path.join(folder, f"{split}.csv"), rows)
  return test_sets


TRAIN = [
    "TextMultiLabelTask.seq_length = 32",
    "OptimizerConfig.learning_rate = 1e-3",
    "EpochSchedule.train_epochs = 48",
    "TrainerConfig.steps_per_loop = 50",
]


@pytest.mark.slow
def test_learns_a_synthetic_multilabel_task_end_to_end(tmp_path, spm_model):
  data_dir = str(tmp_path / "mydata")
  test_sets = write_multilabel_csv(data_dir)
  model_dir = str(tmp_path / "model")
  common = dict(
      model_dir=model_dir, data_dir=data_dir, spm_model_file=spm_model
  )
  results = helpers.finetune(
      "train_and_eval",
      GIN,
      TRAIN,
      init_checkpoint=helpers.init_checkpoint(tmp_path / "init"),
      **common,
  )
  assert results["dev/micro_f1"] >= 0.9, results
  assert results["dev/subset_accuracy"] >= 0.7, results
  # Reported at the thresholds served, never below their value at 0.5.
  assert results["dev/micro_f1"] >= results["dev/micro_f1_at_0.5"], results
  # 400 examples / 32 x 48 epochs = 600 steps, evaluated every 100.
  history = best_checkpoint.read_history(model_dir)
  assert [e["step"] for e in history] == [100, 200, 300, 400, 500, 600]
  thresholds = [results[f"dev/threshold/{k}"] for k in sorted(CUES)]
  assert all(t in multilabel_metrics.THRESHOLD_GRID for t in thresholds)
  with open(os.path.join(model_dir, "labels.json")) as f:
    assert json.load(f)["labels"] == sorted(CUES)

  helpers.finetune("predict", GIN, TRAIN, **common)
  with open(
      os.path.join(model_dir, "predictions", "test_predictions.csv")
  ) as f:
    rows = list(csv.DictReader(f))
  assert list(rows[0]) == ["id", "labels"] + [f"p_{k}" for k in sorted(CUES)]
  predicted = []
  for row in rows:
    above = {
        k for k, t in zip(sorted(CUES), thresholds) if float(row[f"p_{k}"]) >= t
    }
    names = set(row["labels"].split("|")) - {""}
    assert names == above, row  # the tuned thresholds, as saved
    predicted.append(names)
  assert np.mean([p == t for p, t in zip(predicted, test_sets)]) >= 0.7

  export_dir = str(tmp_path / "export")
  helpers.finetune("export", GIN, TRAIN, export_dir=export_dir, **common)
  with open(os.path.join(data_dir, "test.csv")) as f:
    texts = [row["text"] for row in csv.DictReader(f)]
  out = helpers.call_saved_model(export_dir, {"text": texts})
  hostile.assert_answers_everything(export_dir, ["serving_default"])
  probabilities = np.array(out["probabilities"])  # [N, 3], label order
  np.testing.assert_allclose(
      probabilities,
      [[float(row[f"p_{k}"]) for k in sorted(CUES)] for row in rows],
      atol=1e-5,
  )
  for i in range(len(rows)):
    chosen = sorted(
        (
            (p, k)
            for p, k, t in zip(probabilities[i], sorted(CUES), thresholds)
            if p >= t
        ),
        reverse=True,
    )
    assert set(out["labels"][i]) - {""} == predicted[i]
    assert out["num_labels"][i] == len(chosen)
    assert out["labels"][i] == [k for _, k in chosen] + [""] * (3 - len(chosen))
    np.testing.assert_allclose(
        out["label_probabilities"][i],
        [p for p, _ in chosen] + [0.0] * (3 - len(chosen)),
        rtol=1e-6,
    )

  # transformers: the same probabilities from AlbertForSequenceClassification
  # with problem_type multi_label_classification.
  hf_dir = tmp_path / "hf"
  run = test_helpers.run(
      [
          test_helpers.tool("convert_checkpoint"),
          "--to=huggingface",
          f"--checkpoint={model_dir}",
          f"--output_dir={hf_dir}",
          f"--gin_file={GIN}",
          f"--data_dir={data_dir}",
          f"--spm_model_file={spm_model}",
          *(f"--gin_param={p}" for p in helpers.TINY_GIN + TRAIN),
      ]
  )
  assert run.returncode == 0, run.stderr[-3000:]
  config = json.loads((hf_dir / "config.json").read_text())
  assert config["problem_type"] == "multi_label_classification"
  assert config["id2label"] == {str(i): k for i, k in enumerate(sorted(CUES))}
  import torch  # test-only peer
  import transformers

  hf = transformers.AlbertForSequenceClassification.from_pretrained(
      str(hf_dir)
  ).eval()
  task = finetuning.build_task(
      gin_file=[GIN],
      gin_param=helpers.TINY_GIN + TRAIN,
      spm_model_file=spm_model,
  )
  task.labels, task.pair = tuple(sorted(CUES)), False
  examples = [
      TextExample(guid=str(i), text_a=t, text_b=None, label=None)
      for i, t in enumerate(texts)
  ]
  features = list(task.featurize(examples, training=False))
  with torch.no_grad():
    logits = hf(
        input_ids=torch.tensor(
            np.stack([f["input_word_ids"] for f in features])
        ).long(),
        attention_mask=torch.tensor(
            np.stack([f["input_mask"] for f in features])
        ).long(),
        token_type_ids=torch.tensor(
            np.stack([f["input_type_ids"] for f in features])
        ).long(),
    ).logits
  np.testing.assert_allclose(
      torch.sigmoid(logits).numpy(), probabilities, atol=1e-5
  )
