"""The WordPiece path end to end, as a Chinese user runs it: data from a
vocab.txt, a few pretraining steps, a fine-tuned classifier, its export,
raw Chinese text in and a label out (tests/testdata/chinese: sentences of
Debian's zh_CN manual pages; the label is the package a sentence comes from).
"""

import csv
import os
import shutil

import pytest

from tests import helpers
from tests.albert.finetuning.finetune_helpers import call_saved_model

CHINESE = os.path.join(helpers.REPO, "tests", "testdata", "chinese")
VOCAB = os.path.join(CHINESE, "vocab.txt")
MODEL = [
    "--gin_file=gin/tiny.gin",
    "--gin_param=AlbertConfig.vocab_size=1448",
    "--gin_param=AlbertConfig.num_layers=2",
    "--gin_param=AlbertConfig.max_position_embeddings=64",
]


def _ok(run):
  assert run.returncode == 0, run.stderr[-3000:]
  return run


@pytest.mark.slow
def test_chinese_text_to_a_served_label(tmp_path):
  data = tmp_path / "data"
  _ok(
      helpers.run(
          [
              "tools/create_pretraining_data.py",
              f"--input_file={CHINESE}/corpus.txt",
              f"--output_file={data}/train.tfrecord",
              f"--vocab_file={VOCAB}",
              "--max_seq_length=64",
              "--max_predictions_per_seq=10",
              "--dupe_factor=2",
              # The data of the README's figure (the original's
              # random_document rule draws other pairs, and 20 steps of
              # pretraining then leave the classifier at the majority
              # class in this short fine-tuning).
              "--single_segment=split",
          ]
      )
  )
  model = tmp_path / "model"
  _ok(
      helpers.run(
          [
              "-m",
              "albert.run_pretraining",
              f"--model_dir={model}",
              *MODEL,
              f"--gin_param=PretrainTask.train_file_pattern='{data}/train*'",
              "--gin_param=PretrainTask.seq_length=64",
              "--gin_param=PretrainTask.max_predictions_per_seq=10",
              "--gin_param=PretrainTask.global_batch_size=16",
              "--gin_param=TRAIN_STEPS=20",
              "--gin_param=OptimizerConfig.warmup_steps=2",
              "--gin_param=TrainerConfig.steps_per_loop=10",
              "--gin_param=TrainerConfig.checkpoint_interval=20",
              "--gin_param=TrainerConfig.eval_interval=0",
          ]
      )
  )
  # The dev sentences again as a test split, without labels.
  tasks = tmp_path / "classification"
  shutil.copytree(os.path.join(CHINESE, "classification"), tasks)
  with open(tasks / "dev.tsv", encoding="utf-8") as f:
    dev = list(csv.DictReader(f, delimiter="\t"))
  with open(tasks / "test.tsv", "w", encoding="utf-8", newline="") as f:
    writer = csv.writer(f, delimiter="\t", lineterminator="\n")
    writer.writerow(["id", "text"])
    writer.writerows((f"dev-{i}", row["text"]) for i, row in enumerate(dev))
  finetune = [
      "-m",
      "albert.run_finetuning",
      "--gin_file=gin/finetune/text_classification.gin",
      *MODEL,
      "--gin_param=TextClassificationTask.seq_length=64",
      "--gin_param=EpochSchedule.train_epochs=8.0",
      "--gin_param=OptimizerConfig.learning_rate=1e-3",
      f"--vocab_file={VOCAB}",
      f"--data_dir={tasks}",
      f"--model_dir={tmp_path / 'classifier'}",
  ]
  trained = _ok(
      helpers.run(
          finetune + [f"--init_checkpoint={model}", "--mode=train_and_eval"]
      )
  )
  accuracy = float(trained.stdout.split("dev/accuracy = ")[1].split()[0])
  # 71% of the dev sentences are man-db's: well above always saying so.
  assert accuracy >= 0.85, trained.stdout
  _ok(helpers.run(finetune + ["--mode=predict"]))
  with open(
      tmp_path / "classifier" / "predictions" / "test_predictions.tsv",
      encoding="utf-8",
  ) as f:
    predicted = [r["prediction"] for r in csv.DictReader(f, delimiter="\t")]
  export = tmp_path / "export"
  _ok(helpers.run(finetune + ["--mode=export", f"--export_dir={export}"]))
  # Raw Chinese text in (tokenized by WordPiece in the graph), labels out,
  # in a process that imports only TensorFlow and TF-Text.
  served = call_saved_model(str(export), {"text": [r["text"] for r in dev]})
  assert served["label"] == predicted
  assert set(served["label"]) == {"man-db", "passwd"}
