"""`python -m albert.run_finetuning` as users run it: one-line errors, the
epoch schedule, and training under MirroredStrategy."""

import json
import random

import numpy as np
import pytest
import tensorflow as tf

from albert.finetuning.training import EpochSchedule
from official.core.trainer_config import TrainerConfig
from official.optimization.optimizer_config import OptimizerConfig
from tests import helpers as test_helpers
from tests.albert.finetuning import finetune_helpers as helpers
from tests.albert.finetuning.glue.test_task import write_sst2


def test_epoch_schedule_derives_steps_and_warmup():
  trainer, optimizer = EpochSchedule(
      train_epochs=2.0, warmup_proportion=0.1
  ).apply(
      TrainerConfig(train_steps=5),
      OptimizerConfig(warmup_steps=0, decay_steps=5),
      num_examples=1000,
      global_batch_size=48,
  )
  assert trainer.train_steps == 41  # int(1000 / 48 * 2) = int(41.67)
  assert optimizer.decay_steps == 41 and optimizer.warmup_steps == 4  # int(4.1)
  _, optimizer = EpochSchedule(train_epochs=2.0, warmup_proportion=0.1).apply(
      TrainerConfig(), OptimizerConfig(warmup_steps=0, decay_steps=5), 1190, 48
  )
  assert optimizer.decay_steps == 49 and optimizer.warmup_steps == 4  # int(4.9)
  trainer, optimizer = EpochSchedule().apply(
      TrainerConfig(train_steps=5),
      OptimizerConfig(warmup_steps=2, decay_steps=5),
      1000,
      48,
  )
  assert (trainer.train_steps, optimizer.warmup_steps) == (5, 2)


@pytest.mark.slow
def test_cli_errors_are_one_line_with_a_non_zero_exit(tmp_path):
  args = [
      "-m",
      "albert.run_finetuning",
      "--gin_file=gin/finetune/rte.gin",
      "--gin_file=gin/tiny.gin",
      f"--model_dir={tmp_path / 'm'}",
      "--mode=train",
      f"--data_dir={tmp_path / 'nowhere'}",
      "--spm_model_file=x.model",
  ]
  run = test_helpers.run(args, timeout=300)
  assert run.returncode == 1
  last = run.stderr.strip().splitlines()[-1]
  assert last.startswith(
      "run_finetuning: error: rte: data_dir "
  ) and last.endswith("nowhere is not a directory"), run.stderr[-2000:]
  # --early_stopping_patience becomes the gin binding it names, checked.
  run = test_helpers.run(args + ["--early_stopping_patience=-1"], timeout=300)
  assert run.returncode != 0
  assert "early_stopping_patience" in run.stderr and (
      "Traceback" not in run.stderr
  ), run.stderr[-2000:]


def _weights(model_dir):
  reader = tf.train.load_checkpoint(model_dir)
  return {
      n: reader.get_tensor(n)
      for n in reader.get_variable_to_shape_map()
      if n.startswith("model/")
  }


# A fresh process (test_helpers.TWO_CPUS_SCRIPT says why).
_TRAIN_BOTH = (
    test_helpers.TWO_CPUS_SCRIPT
    + """
from tests import helpers as test_helpers
from tests.albert.finetuning import finetune_helpers as helpers
args = json.loads(sys.argv[1])
metrics = {}
for strategy in ("default", "mirrored"):
  # The one-device reference runs untraced.
  with test_helpers.eagerly(strategy == "default"):
    metrics[strategy] = helpers.finetune(
        "train_and_eval", "gin/finetune/sst2.gin", args["params"],
        init_checkpoint=args["init"], model_dir=args["root"] + "/" + strategy,
        data_dir=args["data_dir"], spm_model_file=args["spm"],
        strategy=strategy)
print(json.dumps(metrics))
"""
)


@pytest.mark.slow
def test_mirrored_fine_tuning_matches_one_device(tmp_path, spm_model):
  data_dir = str(tmp_path / "glue")
  write_sst2(data_dir, n_train=64, n_dev=8, n_test=2)
  init = helpers.init_checkpoint(tmp_path / "init")
  params = [
      "GlueTask.seq_length = 24",
      "GlueTask.global_batch_size = 8",
      "GlueTask.dropout_rate = 0.0",
      "OptimizerConfig.warmup_steps = 1",
      "TRAIN_STEPS = 3",
  ]
  args = {
      "params": params,
      "init": init,
      "root": str(tmp_path),
      "data_dir": data_dir,
      "spm": spm_model,
  }
  run = test_helpers.run(["-c", _TRAIN_BOTH, json.dumps(args)], timeout=600)
  assert run.returncode == 0, run.stderr[-3000:]
  metrics = json.loads(run.stdout.strip().splitlines()[-1])
  assert "Strategy mirrored with 2 replica(s)" in run.stderr
  # Evaluation after mirrored training reads the same weights.
  assert metrics["mirrored"] == pytest.approx(metrics["default"])
  runs = {s: _weights(str(tmp_path / s)) for s in ("default", "mirrored")}
  assert sorted(runs["default"]) == sorted(runs["mirrored"])
  init_weights = _weights(init)
  moved = 0
  for name, value in runs["default"].items():
    np.testing.assert_allclose(
        runs["mirrored"][name], value, rtol=1e-4, atol=1e-6, err_msg=name
    )
    if name in init_weights:
      moved += not np.array_equal(value, init_weights[name])
  assert moved > 10  # training changed the restored encoder


@pytest.mark.slow
def test_refused_init_checkpoint_leaves_nothing_and_the_fix_runs(
    tmp_path, spm_model
):
  data_dir = str(tmp_path / "glue")
  write_sst2(data_dir, n_train=16, n_dev=4, n_test=2)
  init = helpers.init_checkpoint(tmp_path / "init")
  model_dir = tmp_path / "model"
  params = [
      "GlueTask.seq_length = 24",
      "GlueTask.global_batch_size = 8",
      "OptimizerConfig.warmup_steps = 1",
      "TRAIN_STEPS = 2",
  ]
  common = dict(
      init_checkpoint=init,
      model_dir=str(model_dir),
      data_dir=data_dir,
      spm_model_file=spm_model,
  )
  with pytest.raises(ValueError, match="is another model"):
    helpers.finetune(
        "train",
        "gin/finetune/sst2.gin",
        params + ["AlbertConfig.intermediate_size = 96"],
        **common,
    )
  assert not model_dir.exists()
  # The corrected run is not blocked by anything the refused one left.
  helpers.finetune("train", "gin/finetune/sst2.gin", params, **common)
  assert tf.train.latest_checkpoint(str(model_dir)).endswith("ckpt-2")
  assert (model_dir / "model_config.json").exists()
  assert (model_dir / "operative_config.gin").exists()


# A fresh process, as above. A classification and a SQuAD task predict with
# the same weights on one device and on two replicas (batches of 4 split
# 2 + 2; the last one padded); everything but floating-point noise agrees.
_PREDICT_BOTH = (
    test_helpers.TWO_CPUS_SCRIPT
    + """
import filecmp
import gin
import numpy as np
import tf_keras
from albert.finetuning import training as finetuning
from official.distribute.replicated import Replicated
from official.distribute.strategy import make_strategy
args = json.loads(sys.argv[1])
mirrored = Replicated(make_strategy("mirrored"))
assert mirrored.replicas == 2
report = {}
for name, recipe, params in args["tasks"]:
  gin.clear_config()
  task = finetuning.build_task(
      gin_file=[recipe], gin_param=params, data_dir=args[name],
      spm_model_file=args["spm"])
  tf_keras.utils.set_random_seed(0)
  one = task.build_model()
  with mirrored.strategy.scope():
    two = task.build_model()
  two.set_weights(one.get_weights())
  split = task.eval_splits[0]
  _, features, single = task.predict(one, split)
  _, _, replicated = task.predict(two, split, mirrored)
  report[name] = {
      "features": len(features),
      "max_diff": max(float(np.max(np.abs(single[k] - replicated[k])))
                      for k in single),
      "same_keys": sorted(single) == sorted(replicated),
      "metrics": [task.evaluate(one), task.evaluate(two, runner=mirrored)],
  }
  out = args["root"] + "/" + name
  written = [task.predict_to_files(one, out + "/one"),
             task.predict_to_files(two, out + "/two", mirrored)]
  report[name]["files"] = [p.rsplit("/", 1)[1] for p in written[0]]
  report[name]["same_files"] = all(
      filecmp.cmp(a, b, shallow=False) for a, b in zip(*written)
      if a.endswith(("predictions.json", ".tsv")))
print(json.dumps(report))
"""
)


@pytest.mark.slow
def test_prediction_on_two_replicas_equals_one_device(
    tmp_path, spm_model, tokenizer
):
  from albert.experiments import synthetic_squad

  glue = str(tmp_path / "glue")
  write_sst2(glue, n_train=8, n_dev=9, n_test=5)
  squad_dir = tmp_path / "squad"
  squad_dir.mkdir()
  rng = random.Random(7)
  markers, words = synthetic_squad.markers_and_words(tokenizer, 20)
  for split, n in (("train", 4), ("dev", 11)):
    synthetic_squad.write_squad(
        squad_dir / f"{split}-v1.1.json", rng, words, markers, n, "1.1"
    )
  tiny = helpers.TINY_GIN + [
      "AlbertConfig.dropout_rate = 0.0",
      "AlbertConfig.attention_dropout_rate = 0.0",
  ]
  args = {
      "root": str(tmp_path),
      "spm": spm_model,
      "sst2": glue,
      "squad": str(squad_dir),
      "tasks": [
          (
              "sst2",
              "gin/finetune/sst2.gin",
              tiny
              + ["GlueTask.seq_length = 24", "GlueTask.eval_batch_size = 4"],
          ),
          (
              "squad",
              "gin/finetune/squad_v1.gin",
              tiny
              + [
                  "SquadTask.seq_length = 32",
                  "SquadTask.max_query_length = 8",
                  "SquadTask.doc_stride = 8",
                  "SquadTask.eval_batch_size = 4",
              ],
          ),
      ],
  }
  run = test_helpers.run(["-c", _PREDICT_BOTH, json.dumps(args)], timeout=600)
  assert run.returncode == 0, run.stderr[-3000:]
  report = json.loads(run.stdout.strip().splitlines()[-1])
  assert report["sst2"]["features"] == 9
  assert report["squad"]["features"] % 4  # a padded last batch
  for name, found in report.items():
    assert found["same_keys"] and found["max_diff"] < 1e-5, (name, found)
    one, two = found["metrics"]
    assert one == pytest.approx(two, abs=1e-9), name
    assert found["files"] and found["same_files"], (name, found)
