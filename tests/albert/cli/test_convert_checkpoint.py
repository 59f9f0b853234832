"""`python tools/convert_checkpoint.py` as users run it: one-line errors, and a
released-style checkpoint with optimizer slots that pretraining resumes."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from albert import model_dir as model_dir_lib
from albert.modeling.pretrainer import AlbertPretrainer
from official.optimization.optimizer_config import OptimizerConfig
from tests.albert.checkpoint_conversion import (
    original_checkpoint_reference as original,
)
from tests.albert.synthetic_records import write_records
from tests import helpers

TOOL = helpers.tool("convert_checkpoint")
# The synthetic records: vocabulary 64, sequences of 32, 5 predictions.
CONFIG = original.original_config(
    vocab_size=64,
    max_position_embeddings=32,
    num_hidden_groups=2,
    inner_group_num=2,
)
STEP = 5


def _run(*args, module=None):
  command = ["-m", module] if module else [TOOL]
  return helpers.run(command + list(args), timeout=600)


@pytest.fixture(scope="module")
def released(tmp_path_factory):
  """model.ckpt-best with adam_m / adam_v slots, global_step and its config."""
  folder = tmp_path_factory.mktemp("released")
  arrays = original.random_arrays(CONFIG, seed=7, slots=True, global_step=STEP)
  original.write_checkpoint(folder / "model.ckpt-best", arrays)
  with open(folder / "albert_config.json", "w") as f:
    json.dump(CONFIG, f)
  return folder, arrays


def _assert_one_line_error(run, output_dir, expected):
  assert run.returncode != 0
  lines = [l for l in run.stderr.splitlines() if l.strip()]
  ours = [l for l in lines if l.startswith("convert_checkpoint: error: ")]
  assert len(ours) == 1 and lines[-1] == ours[0], run.stderr[-2000:]
  assert expected in ours[0], ours[0]
  assert not os.path.exists(output_dir)
  parent = os.path.dirname(output_dir)
  assert not [p for p in os.listdir(parent) if ".partial-" in p]


@pytest.mark.parametrize(
    "case",
    [
        "missing_checkpoint",
        "wrong_shapes",
        "unknown_tensor",
        "missing_config",
        "no_direction",
        "not_a_saved_model",
    ],
)
@pytest.mark.slow
def test_errors_are_one_line_and_leave_nothing(released, tmp_path, case):
  folder, arrays = released
  ckpt = str(folder / "model.ckpt-best")
  out = str(tmp_path / "out")
  args = ["--from=original", f"--checkpoint={ckpt}", f"--output_dir={out}"]
  if case == "missing_checkpoint":
    args[1] = f"--checkpoint={folder}/model.ckpt-404"
    expected = "model.ckpt-404.index not found"
  elif case == "wrong_shapes":
    path = tmp_path / "wide.json"
    path.write_text(json.dumps({**CONFIG, "intermediate_size": 48}))
    args.append(f"--albert_config={path}")
    expected = (
        "ffn_1/intermediate/dense/kernel has shape [16, 32] but the "
        "config needs [16, 48]"
    )
  elif case == "unknown_tensor":
    (tmp_path / "ckpt").mkdir()
    extra = dict(
        arrays, **{"cls/squad/output_weights": np.zeros((2, 16), np.float32)}
    )
    args[1] = "--checkpoint=" + original.write_checkpoint(
        tmp_path / "ckpt" / "model.ckpt-1", extra
    )
    args.append(f"--albert_config={folder}/albert_config.json")
    expected = "unexpected tensors cls/squad/output_weights"
  elif case == "missing_config":
    (tmp_path / "ckpt").mkdir()
    args[1] = "--checkpoint=" + original.write_checkpoint(
        tmp_path / "ckpt" / "model.ckpt-1", arrays
    )
    expected = "no albert_config.json beside --checkpoint="
  elif case == "not_a_saved_model":
    args[0] = "--from=tf_hub"
    args[1] = f"--checkpoint={folder}"
    expected = "has no saved_model.pb: not a SavedModel directory"
  else:
    args[0] = f"--albert_config={folder}/albert_config.json"
    expected = "give exactly one of --from"
  _assert_one_line_error(_run(*args), out, expected)


def _restore_like_the_trainer(model_dir):
  model = AlbertPretrainer.from_config_object(
      model_dir_lib.read_model_config(model_dir)
  )
  optimizer = OptimizerConfig().build()
  optimizer.build(model.trainable_variables)
  tf.train.Checkpoint(model=model, optimizer=optimizer).restore(
      tf.train.latest_checkpoint(model_dir)
  ).assert_existing_objects_matched()
  return model, optimizer


@pytest.mark.slow
def test_pretraining_resumes_from_converted_optimizer_state(released, tmp_path):
  folder, arrays = released
  model_dir = str(tmp_path / "ours")
  run = _run(
      "--from=original",
      f"--checkpoint={folder}/model.ckpt-best",
      f"--albert_config={folder}/albert_config.json",
      f"--output_dir={model_dir}",
      "--optimizer_slots",
  )
  assert run.returncode == 0, run.stderr[-2000:]
  assert run.stdout.strip() == os.path.join(model_dir, f"ckpt-{STEP}")

  data = tmp_path / "data"
  data.mkdir()
  write_records(data / "train-0.tfrecord", 64, seed=0)
  params = [
      f"PretrainTask.train_file_pattern='{data}/train-*.tfrecord'",
      "PretrainTask.seq_length=32",
      "PretrainTask.max_predictions_per_seq=5",
      "PretrainTask.global_batch_size=8",
      f"TRAIN_STEPS={STEP + 2}",
      "OptimizerConfig.warmup_steps=2",
      "TrainerConfig.steps_per_loop=1",
      "TrainerConfig.checkpoint_interval=1",
      "TrainerConfig.eval_interval=0",
  ]
  run = _run(
      f"--gin_file={model_dir}/operative_config.gin",
      f"--model_dir={model_dir}",
      *[f"--gin_param={p}" for p in params],
      module="albert.run_pretraining",
  )
  assert run.returncode == 0, run.stderr[-3000:]
  assert f"Resumed from {model_dir}/ckpt-{STEP} at step {STEP}" in run.stderr
  assert tf.train.latest_checkpoint(model_dir).endswith(f"ckpt-{STEP + 2}")

  model, optimizer = _restore_like_the_trainer(model_dir)
  assert int(optimizer.iterations.numpy()) == STEP + 2
  stack = model.encoder.transformer
  p = "bert/encoder/transformer/group_1/inner_group_1/"  # weight set 3
  for name, variable in (
      ("bert/embeddings/word_embeddings", model.encoder.embedding_table),
      (
          p + "attention_1/self/value/kernel",
          stack.attention_blocks[3].value.kernel,
      ),
      (
          p + "ffn_1/intermediate/dense/bias",
          stack.ffn_blocks[3].intermediate.bias,
      ),
      ("cls/predictions/transform/dense/kernel", model.masked_lm.dense.kernel),
  ):
    m, v = (s.numpy() for s in optimizer.slots(variable))
    m0, v0 = arrays[name + "/adam_m"], arrays[name + "/adam_v"]
    # Two steps from (m0, v0) with gradients clipped to global norm 1:
    # m = 0.81 m0 + 0.09 g1 + 0.1 g2, v = 0.998 v0 + (small, >= 0).
    # Fresh zero slots would give |m| <= 0.19 where |0.81 m0| >= 0.81.
    assert np.abs(m - 0.81 * m0).max() <= 0.19 + 1e-6, name
    assert (v >= 0.999**2 * v0 - 1e-6).all(), name
    assert (v - 0.999**2 * v0 <= 2e-3 + 1e-6).all(), name
    # The weights moved a little from the converted ones, not from an init.
    w, w0 = variable.numpy(), arrays[name]
    assert 0 < np.abs(w - w0).max() < 0.05, name

  # And back out, with the optimizer state of step STEP + 2.
  run = _run(
      "--to=original",
      f"--checkpoint={model_dir}",
      f"--output_dir={tmp_path / 'back'}",
      "--optimizer_slots",
  )
  assert run.returncode == 0, run.stderr[-2000:]
  reader = tf.train.load_checkpoint(str(tmp_path / "back"))
  assert reader.get_tensor("global_step") == STEP + 2
  m, _ = optimizer.slots(model.encoder.embedding_table)
  np.testing.assert_array_equal(
      reader.get_tensor("bert/embeddings/word_embeddings/adam_m"), m.numpy()
  )
