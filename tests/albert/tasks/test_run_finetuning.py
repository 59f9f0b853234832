"""`python -m albert.run_finetuning` as users run it: one-line errors, the
epoch schedule, and training under MirroredStrategy."""

import json

import numpy as np
import pytest
import tensorflow as tf

from albert.finetuning import EpochSchedule
from official.core.trainer_config import TrainerConfig
from official.optimization.optimizer_config import OptimizerConfig
from tests import helpers as test_helpers
from tests.albert.tasks import finetune_helpers as helpers
from tests.albert.tasks.test_glue_task import write_sst2


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


# A fresh process: collective-op keys restart with every MirroredStrategy, so
# strategies built earlier in a test worker would clash with this one.
_TRAIN_BOTH = """
import json, sys
from absl import logging
import tensorflow as tf
logging.set_verbosity(logging.INFO)
cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)
from tests.albert.tasks import finetune_helpers as helpers
args = json.loads(sys.argv[1])
metrics = {}
for strategy in ("default", "mirrored"):
  metrics[strategy] = helpers.finetune(
      "train_and_eval", "gin/finetune/sst2.gin", args["params"],
      init_checkpoint=args["init"], model_dir=args["root"] + "/" + strategy,
      data_dir=args["data_dir"], spm_model_file=args["spm"], strategy=strategy)
print(json.dumps(metrics))
"""


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
