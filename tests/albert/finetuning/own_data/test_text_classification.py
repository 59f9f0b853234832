"""Fine-tuning on own files: CSV / TSV / JSON Lines readers, the label set
saved in the model directory, metrics against scikit-learn, prediction files
and the raw-text SavedModel with label names."""

import csv
import json
import os
import random

import gin
import numpy as np
import pytest
import tensorflow as tf

from albert.finetuning import training as finetuning
from albert.finetuning import task_state
from albert import model_dir as model_dir_lib
from albert.modeling.classifier import AlbertClassifier
from albert import seeds
from albert.finetuning import classification_metrics
from albert.finetuning.own_data import reader as own_data
from official.errors import InputError
from tests.albert.serving import hostile
from tests.albert.serving.test_tflite import run_export_tflite
from tests.albert.serving.test_tflite import tflite_runner
from tests.albert.finetuning import finetune_helpers as helpers
from tests import helpers as test_helpers

FILLER = (
    "the file name is a string of the module and the list of values "
    "with an object in each class for this function"
).split()
# One cue word per label; the label names are what the user wrote.
CUES = {"sports": "match", "politics": "vote", "science": "atom"}


def _sentence(rng, label):
  words = rng.sample(FILLER, rng.randint(4, 8))
  words.insert(rng.randint(0, len(words)), CUES[label])
  if rng.random() < 0.3:  # commas and quotes exercise CSV quoting
    words.insert(1, 'a, "quoted"')
  return " ".join(words)


def write_own_csv(folder, seed=0, n_train=300, n_dev=60, n_test=12):
  """train/dev/test.csv with `id`, `text`, `label` (test: no label)."""
  rng = random.Random(seed)
  os.makedirs(folder, exist_ok=True)
  test_labels = []
  for split, n in (("train", n_train), ("dev", n_dev), ("test", n_test)):
    with open(os.path.join(folder, f"{split}.csv"), "w", newline="") as f:
      writer = csv.writer(f)
      writer.writerow(["id", "text"] + (["label"] if split != "test" else []))
      for i in range(n):
        label = rng.choice(sorted(CUES))
        row = [f"{split}-{i}", _sentence(rng, label)]
        writer.writerow(row + ([label] if split != "test" else []))
        if split == "test":
          test_labels.append(label)
  return test_labels


def test_macro_f1_matches_scikit_learn():
  metrics = pytest.importorskip("sklearn.metrics")
  rng = np.random.default_rng(0)
  for _ in range(50):
    n = int(rng.integers(1, 40))
    labels = rng.integers(0, 4, n)
    predictions = rng.integers(0, 5, n)  # a class only in predictions too
    want = metrics.f1_score(
        labels, predictions, average="macro", zero_division=0
    )
    assert classification_metrics.macro_f1(
        predictions, labels
    ) == pytest.approx(want)
  # By hand: classes 0 and 1; F1(0) = 2/3, F1(1) = 0.8.
  assert classification_metrics.macro_f1(
      [0, 1, 1, 1], [0, 0, 1, 1]
  ) == pytest.approx((2 / 3 + 0.8) / 2)


def test_readers_take_csv_tsv_and_json_lines(tmp_path):
  rows = [
      {"text": 'he said "yes", then left', "label": "a"},
      {"text": "tab\tinside\nand a line break", "label": "b"},
  ]
  rows.append({"text": "long " * 60000, "label": "a"})  # over 128 KiB
  for ext, delimiter in ((".csv", ","), (".tsv", "\t")):
    path = str(tmp_path / f"train{ext}")
    # A byte-order mark, as spreadsheet programs write.
    with open(path, "w", newline="", encoding="utf-8-sig") as f:
      writer = csv.DictWriter(f, ["text", "label"], delimiter=delimiter)
      writer.writeheader()
      writer.writerows(rows)
    examples, pair = own_data.read_text_examples(
        path,
        own_data.Columns(),
        pair=None,
        labeled=True,
        regression=False,
    )
    assert not pair
    assert [(e.guid, e.text_a, e.label) for e in examples] == [
        ("0", rows[0]["text"], "a"),
        ("1", rows[1]["text"], "b"),
        ("2", rows[2]["text"], "a"),
    ]
  path = str(tmp_path / "dev.jsonl")
  with open(path, "w") as f:
    f.write('{"q": "one", "p": "two", "y": 1, "id": 7}\n\n')
    f.write('{"q": "three", "p": "four", "y": 0, "id": 8}\n')
  columns = own_data.Columns(text="q", text_pair="p", label="y")
  examples, pair = own_data.read_text_examples(
      path, columns, pair=None, labeled=True, regression=False
  )
  assert pair
  assert [(e.guid, e.text_a, e.text_b, e.label) for e in examples] == [
      ("7", "one", "two", "1"),
      ("8", "three", "four", "0"),
  ]
  examples, _ = own_data.read_text_examples(
      path, columns, pair=True, labeled=True, regression=True
  )
  assert [e.label for e in examples] == [1.0, 0.0]


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("train.csv", "words,label\nx,a\n", "no 'text' column"),
        ("train.csv", "text,label\nx,a\ny\n", "line 3: the 'label' field is"),
        ("train.csv", "text,label\nx,a,extra\n", "line 2: 3 fields but"),
        ("train.jsonl", '{"text": "x", "label": "a"}\n[1]\n', "line 2: a JSON"),
        ("train.jsonl", '{"text": "x", "label": "a"\n', "line 1: not JSON"),
        ("train.jsonl", '{"text": 3, "label": "a"}\n', "is a JSON int"),
        ("train.csv", "text,label,id\nx,a,1\ny,b,1\n", "id '1' is also on"),
        ("train.csv", b"text,label\n\xe9t\xe9,a\n", "not UTF-8"),
        ("train.csv", 'text,label\n"x"y",a\n', "line 2: .*check the quoting"),
    ],
)
def test_reader_errors_name_the_file_and_line(tmp_path, name, content, message):
  path = tmp_path / name
  if isinstance(content, bytes):
    path.write_bytes(content)
  else:
    path.write_text(content)
  with pytest.raises(InputError, match=message) as raised:
    own_data.read_text_examples(
        str(path),
        own_data.Columns(),
        pair=None,
        labeled=True,
        regression=False,
    )
  assert str(raised.value).startswith(str(path))
  (tmp_path / "train.tsv").write_text("text\tlabel\n")
  with pytest.raises(InputError, match="hold the train split; keep one"):
    own_data.find_split_file(str(tmp_path), "train")


def test_regression_labels_must_be_numbers(tmp_path):
  path = tmp_path / "train.csv"
  path.write_text("text,label\nx,0.5\ny,high\n")
  with pytest.raises(InputError, match="line 3: 'label' is 'high', not a"):
    own_data.read_text_examples(
        str(path),
        own_data.Columns(),
        pair=None,
        labeled=True,
        regression=True,
    )


TRAIN = [
    "TextClassificationTask.seq_length = 32",
    "TextClassificationTask.global_batch_size = 32",
    "OptimizerConfig.learning_rate = 3e-4",
    "EpochSchedule.train_epochs = 16.0",
    "TrainerConfig.checkpoint_interval = 1000",
]


@pytest.mark.slow
def test_csv_classification_trains_predicts_and_serves_label_names(
    tmp_path, spm_model
):
  data_dir = str(tmp_path / "mydata")
  test_labels = write_own_csv(data_dir, n_dev=120)
  init = helpers.init_checkpoint(tmp_path / "init")
  model_dir = str(tmp_path / "model")
  common = dict(
      model_dir=model_dir, data_dir=data_dir, spm_model_file=spm_model
  )
  gin_file = "gin/finetune/text_classification.gin"
  results = helpers.finetune(
      "train_and_eval", gin_file, TRAIN, init_checkpoint=init, **common
  )
  assert results["dev/accuracy"] >= 0.9, results
  assert 0.85 <= results["dev/macro_f1"] <= 1.0
  confusion = [
      [results[f"dev/confusion/{a}/{b}"] for b in sorted(CUES)]
      for a in sorted(CUES)
  ]
  assert np.sum(confusion) == 120  # every dev text, once
  assert np.trace(confusion) / 120 == pytest.approx(results["dev/accuracy"])
  with open(os.path.join(model_dir, "labels.json")) as f:
    saved = json.load(f)
  with open(os.path.join(data_dir, "train.csv")) as f:
    train_labels = [row["label"] for row in csv.DictReader(f)]
  assert saved == {
      "task": "text_classification",
      "labels": ["politics", "science", "sports"],
      "text_pair": False,
      "long_text": {"mode": "truncate"},
      # Each label's training examples (no weights: none were set).
      "class_counts": [train_labels.count(k) for k in sorted(CUES)],
  }
  # 300 examples / 32 x 16 epochs.
  assert os.path.exists(os.path.join(model_dir, "ckpt-150.index"))

  # eval and predict need neither the training file nor the labels again.
  os.remove(os.path.join(data_dir, "train.csv"))
  again = helpers.finetune("eval", gin_file, TRAIN, **common)
  assert again == pytest.approx(helpers.eval_of_best(results))
  helpers.finetune("predict", gin_file, TRAIN, **common)
  with open(
      os.path.join(model_dir, "predictions", "test_predictions.csv")
  ) as f:
    rows = list(csv.DictReader(f))
  assert [r["id"] for r in rows] == [f"test-{i}" for i in range(len(rows))]
  assert list(rows[0]) == [
      "id",
      "prediction",
      "p_politics",
      "p_science",
      "p_sports",
  ]
  for row in rows:
    probabilities = [float(row[f"p_{k}"]) for k in saved["labels"]]
    assert sum(probabilities) == pytest.approx(1.0, abs=1e-5)
    assert row["prediction"] == saved["labels"][int(np.argmax(probabilities))]
  predicted = [r["prediction"] for r in rows]
  assert np.mean([p == t for p, t in zip(predicted, test_labels)]) >= 0.8

  export_dir = str(tmp_path / "export")
  helpers.finetune("export", gin_file, TRAIN, export_dir=export_dir, **common)
  sentences = ["the atom of the module", "a vote for this function", "match"]
  out = helpers.call_saved_model(export_dir, {"text": sentences})
  assert out["label"] == ["science", "politics", "sports"]
  np.testing.assert_allclose(np.sum(out["probabilities"], -1), 1.0, rtol=1e-5)
  hostile.assert_answers_everything(export_dir, ["serving_default"])
  _assert_tflite_agrees(tmp_path, gin_file, common, export_dir)

  # The model directory describes itself (its recipe, encoder and tokenizer
  # file): export needs only --model_dir, as the README shows.
  gin.clear_config()
  alone = str(tmp_path / "export_alone")
  finetuning.run(mode="export", model_dir=model_dir, export_dir=alone)
  again = helpers.call_saved_model(alone, {"text": sentences})
  assert again["label"] == out["label"]
  np.testing.assert_allclose(again["probabilities"], out["probabilities"])

  # A rerun with another label list is refused before anything changes.
  with pytest.raises(InputError, match="trained on labels"):
    helpers.finetune(
        "eval",
        gin_file,
        TRAIN + ["TextClassificationTask.labels = ['a', 'b']"],
        **common,
    )


_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


def _assert_tflite_agrees(tmp_path, gin_file, common, export_dir):
  """`python -m albert.export_tflite` of the classifier: float32
  probabilities within 1e-4 of its SavedModel's on the held-out (dev)
  examples, the int8 model's classes the same on at least 98% of them."""
  task = finetuning.build_task(
      gin_file=[gin_file],
      gin_param=helpers.TINY_GIN + TRAIN,
      data_dir=common["data_dir"],
      spm_model_file=common["spm_model_file"],
  )
  task.use_state(task_state.TaskState(common["model_dir"]))
  features = list(task.featurize(task.read_examples("dev"), training=False))
  assert len(features) == 120
  records = [
      tf.train.Example(
          features=tf.train.Features(
              feature={
                  original: tf.train.Feature(
                      int64_list=tf.train.Int64List(value=f[ours])
                  )
                  for original, ours in zip(
                      ("input_ids", "input_mask", "segment_ids"), _INPUTS
                  )
              }
          )
      ).SerializeToString()
      for f in features
  ]
  served = tf.saved_model.load(export_dir).signatures["tf_example"]
  want = served(examples=tf.constant(records))["probabilities"].numpy()
  gin_args = [
      f"--gin_file={gin_file}",
      *(f"--gin_param={p}" for p in helpers.TINY_GIN + TRAIN),
      f"--model_dir={common['model_dir']}",
  ]
  for precision in ("float32", "dynamic_int8"):
    path = str(tmp_path / f"classifier_{precision}.tflite")
    run_export_tflite(
        gin_args + [f"--output={path}", f"--precision={precision}"]
    )
    runner = tflite_runner(path)
    got = np.concatenate(
        [
            runner(**{k: f[k][None].astype(np.int32) for k in _INPUTS})[
                "probabilities"
            ]
            for f in features
        ]
    )
    if precision == "float32":
      np.testing.assert_allclose(got, want, atol=1e-4)
    else:
      agreement = np.mean(got.argmax(-1) == want.argmax(-1))
      assert agreement >= 0.98, agreement


def test_labels_from_gin_are_checked_against_every_split(tmp_path, spm_model):
  data_dir = str(tmp_path / "mydata")
  write_own_csv(data_dir, n_train=20, n_dev=8, n_test=2)
  with pytest.raises(InputError, match="has label 'sports', not one of the 2"):
    helpers.finetune(
        "train",
        "gin/finetune/text_classification.gin",
        TRAIN + ["TextClassificationTask.labels = ['politics', 'science']"],
        model_dir=str(tmp_path / "m"),
        data_dir=data_dir,
        spm_model_file=spm_model,
    )
  assert not (tmp_path / "m").exists()


def test_a_frozen_encoder_keeps_its_weights_and_has_no_optimizer_slots(
    tmp_path, spm_model
):
  # With balanced class weights and the focal loss, whose class counts and
  # weights the model directory records.
  data_dir = str(tmp_path / "mydata")
  write_own_csv(data_dir, n_train=64, n_dev=8, n_test=2)
  init = helpers.init_checkpoint(tmp_path / "init")
  model_dir = str(tmp_path / "model")
  helpers.finetune(
      "train",
      "gin/finetune/text_classification.gin",
      TRAIN
      + [
          "EpochSchedule.train_epochs = 2.0",
          "TextClassificationTask.class_weights = 'balanced'",
          "TextClassificationTask.focal_gamma = 2.0",
      ],
      init_checkpoint=init,
      model_dir=model_dir,
      data_dir=data_dir,
      spm_model_file=spm_model,
      freeze_encoder=True,
  )
  after = tf.train.load_checkpoint(tf.train.latest_checkpoint(model_dir))
  shapes = after.get_variable_to_shape_map()
  slots = sorted(
      v for k, v in shapes.items() if k.startswith("optimizer/_variables/")
  )
  # AdamW's two moments of the head's kernel and bias only.
  assert slots == [[3], [3], [64, 3], [64, 3]], slots
  pretrained = model_dir_lib.load_pretrainer(init)[0].encoder
  trained = AlbertClassifier.from_config_object(helpers.TINY, num_classes=3)
  tf.train.Checkpoint(model=trained).read(
      tf.train.latest_checkpoint(model_dir)
  ).expect_partial()
  assert len(trained.encoder.weights) == len(pretrained.weights) > 10
  for got, want in zip(trained.encoder.weights, pretrained.weights):
    np.testing.assert_array_equal(got.numpy(), want.numpy())  # bit for bit
  with open(os.path.join(data_dir, "train.csv")) as f:
    labels = [row["label"] for row in csv.DictReader(f)]
  counts = [labels.count(k) for k in sorted(CUES)]
  with open(os.path.join(model_dir, task_state.LABELS_FILE)) as f:
    facts = json.load(f)
  assert facts["class_counts"] == counts
  np.testing.assert_allclose(
      facts["class_weights"], [64 / (3 * n) for n in counts], rtol=1e-6
  )
  with open(os.path.join(model_dir, "operative_config.gin")) as f:
    recipe = f.read()
  assert "class_weights = 'balanced'" in recipe
  assert "focal_gamma = 2.0" in recipe
  # The sentence embedder has nothing but its encoder: refused in one line.
  gin.clear_config()
  with pytest.raises(InputError, match="no weights outside the encoder"):
    finetuning.build_task(
        gin_file=["gin/finetune/sentence_embedding.gin"],
        gin_param=helpers.TINY_GIN,
        freeze_encoder=True,
    ).build_model()


@pytest.mark.slow
def test_jsonl_pair_regression_reports_correlations_and_serves(
    tmp_path, spm_model
):
  rng = random.Random(1)
  data_dir = tmp_path / "scores"
  data_dir.mkdir()
  levels = {"none": 0.0, "some": 2.5, "many": 5.0}
  for split, n in (("train", 300), ("dev", 48), ("test", 4)):
    with open(data_dir / f"{split}.jsonl", "w") as f:
      for _ in range(n):
        word = rng.choice(sorted(levels))
        row = {
            "text": " ".join(rng.sample(FILLER, 5)),
            "text_pair": f"{word} " + " ".join(rng.sample(FILLER, 4)),
        }
        if split != "test":
          row["label"] = levels[word]
        f.write(json.dumps(row) + "\n")
  init = helpers.init_checkpoint(tmp_path / "init")
  model_dir = str(tmp_path / "model")
  common = dict(
      model_dir=model_dir, data_dir=str(data_dir), spm_model_file=spm_model
  )
  gin_file = "gin/finetune/text_regression.gin"
  params = [
      "TextRegressionTask.seq_length = 32",
      "TextRegressionTask.global_batch_size = 32",
      "OptimizerConfig.learning_rate = 3e-4",
      "EpochSchedule.train_epochs = 16.0",
  ]
  results = helpers.finetune(
      "train_and_eval", gin_file, params, init_checkpoint=init, **common
  )
  assert results["dev/corr"] >= 0.8, results
  assert results["dev/corr"] == pytest.approx(
      (results["dev/pearson"] + results["dev/spearman"]) / 2
  )
  helpers.finetune("predict", gin_file, params, **common)
  with open(
      os.path.join(model_dir, "predictions", "test_predictions.jsonl")
  ) as f:
    rows = [json.loads(line) for line in f]
  assert [r["id"] for r in rows] == ["0", "1", "2", "3"]
  export_dir = str(tmp_path / "export")
  helpers.finetune("export", gin_file, params, export_dir=export_dir, **common)
  out = helpers.call_saved_model(
      export_dir,
      {"text": ["the module", "the module"], "text_pair": ["many", "none"]},
  )
  assert out["score"][0] > out["score"][1] + 2.0, out


@pytest.mark.slow
def test_seeds_run_once_each_and_keep_the_dev_best(tmp_path, spm_model):
  data_dir = str(tmp_path / "mydata")
  write_own_csv(data_dir, n_train=64, n_dev=24, n_test=3)
  init = helpers.init_checkpoint(tmp_path / "init")
  model_dir = tmp_path / "model"
  gin_file = "gin/finetune/text_classification.gin"
  params = TRAIN[:-2] + ["EpochSchedule.train_epochs = 2.0"]
  common = dict(
      mode="train_and_eval",
      model_dir=str(model_dir),
      gin_file=[gin_file],
      gin_param=helpers.TINY_GIN + helpers.TRAINER_GIN + params,
      init_checkpoint=init,
      data_dir=data_dir,
      spm_model_file=spm_model,
  )
  results = seeds.run_seeds([1, 2, 3], keep_all_seeds=True, **common)
  with open(model_dir / "seeds.json") as f:
    summary = json.load(f)
  scores = {int(s): r["dev/accuracy"] for s, r in summary["seeds"].items()}
  best = max([1, 2, 3], key=lambda s: scores[s])
  assert summary["best_seed"] == best and results["best_seed"] == best
  assert results["dev/accuracy"] == scores[best]
  assert {results[f"seed_{s}/dev/accuracy"] for s in (1, 2, 3)} == set(
      scores.values()
  )
  # The seed changed the head's initialisation and the example order.
  heads = [
      tf.train.load_checkpoint(str(model_dir / f"seed_{s}")).get_tensor(
          "model/classifier/kernel/.ATTRIBUTES/VARIABLE_VALUE"
      )
      for s in (1, 2, 3)
  ]
  assert not np.allclose(heads[0], heads[1])
  assert not np.allclose(heads[1], heads[2])
  with open(model_dir / "seed_2" / "operative_config.gin") as f:
    assert "TrainerConfig.seed = 2" in f.read()

  # A rerun evaluates nothing again and now keeps only the best checkpoints.
  again = seeds.run_seeds([1, 2, 3], **common)
  assert again == results
  for seed in (1, 2, 3):
    kept = tf.train.latest_checkpoint(str(model_dir / f"seed_{seed}"))
    assert (kept is not None) == (seed == best)
    assert (model_dir / f"seed_{seed}" / "eval_results.json").exists()
  # eval on MODEL_DIR reads the best run.
  evaluated = helpers.finetune(
      "eval",
      gin_file,
      params,
      model_dir=str(model_dir),
      data_dir=data_dir,
      spm_model_file=spm_model,
  )
  assert evaluated["dev/accuracy"] == pytest.approx(scores[best])
  with pytest.raises(ValueError, match="--seeds needs --mode=train_and_eval"):
    seeds.run_seeds([1], **{**common, "mode": "train"})


# A fresh process per strategy (test_helpers.TWO_CPUS_SCRIPT says why).
_SEEDS_ON = (
    test_helpers.TWO_CPUS_SCRIPT
    + """
from albert import seeds
args = json.loads(sys.argv[1])
print(json.dumps(seeds.run_seeds([1, 2], **args)))
"""
)


@pytest.mark.slow
@pytest.mark.parametrize(
    "strategy,replicas", [("mirrored", 2), ("multi_worker", 1)]
)
def test_seeds_share_one_strategy_per_process(
    tmp_path, spm_model, strategy, replicas
):
  data_dir = str(tmp_path / "mydata")
  write_own_csv(data_dir, n_train=16, n_dev=8, n_test=2)
  args = dict(
      mode="train_and_eval",
      model_dir=str(tmp_path / "model"),
      gin_file=["gin/finetune/text_classification.gin"],
      gin_param=helpers.TINY_GIN
      + helpers.TRAINER_GIN
      + TRAIN[:2]
      + [
          "TextClassificationTask.global_batch_size = 8",
          "EpochSchedule.train_epochs = 1.0",
      ],
      init_checkpoint=helpers.init_checkpoint(tmp_path / "init"),
      data_dir=data_dir,
      spm_model_file=spm_model,
      strategy=strategy,
  )
  run = test_helpers.run(["-c", _SEEDS_ON, json.dumps(args)], timeout=600)
  assert run.returncode == 0, run.stderr[-3000:]
  made = f"Strategy {strategy} with {replicas} replica(s) in sync"
  assert run.stderr.count(made) == 1, run.stderr[-3000:]
  results = json.loads(run.stdout.strip().splitlines()[-1])
  assert results["best_seed"] in (1.0, 2.0)
  for seed in (1, 2):
    assert (tmp_path / "model" / f"seed_{seed}" / "eval_results.json").exists()
