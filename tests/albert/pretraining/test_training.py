"""Pretraining: loss, metrics, checkpoints, strategies, accumulation."""

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from albert.modeling.pretrainer import AlbertPretrainer
from albert.pretraining.task import PretrainTask
from official.core import checkpoints
from official.core.trainer import NonFiniteLossError, Trainer
from official.core.trainer_config import TrainerConfig
from official.distribute.strategy import make_strategy
from official.optimization.optimizer_config import OptimizerConfig
from tests.albert.synthetic_records import write_records
from tests import helpers

TINY = helpers.tiny_config()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
  root = tmp_path_factory.mktemp("pretraining_data")
  for i in range(2):
    write_records(root / f"train-{i}.tfrecord", 96, seed=i)
  write_records(root / "eval.tfrecord", 32, seed=7)
  return root


def make_trainer(
    data_dir,
    model_dir,
    *,
    strategy="default",
    accumulation=1,
    global_batch_size=8,
    train_steps=6,
    checkpoint_interval=3,
    optimizer="lamb",
    policy="float32",
    train_pattern=None,
    eval_pattern=None,
    eval_steps=2,
    learning_rate=0.01,
    steps_per_loop=3,
    model_config=TINY,
    task_kwargs=None,
    **trainer_kwargs,
):
  task = PretrainTask(
      **(task_kwargs or {}),
      train_file_pattern=train_pattern or str(data_dir / "train-*.tfrecord"),
      eval_file_pattern=eval_pattern or str(data_dir / "eval.tfrecord"),
      global_batch_size=global_batch_size,
      seq_length=32,
      max_predictions_per_seq=5,
      shuffle_buffer_size=64,
      model_config=model_config,
  )
  trainer_config = TrainerConfig(
      train_steps=train_steps,
      steps_per_loop=steps_per_loop,
      checkpoint_interval=checkpoint_interval,
      eval_steps=eval_steps,
      gradient_accumulation_steps=accumulation,
      mixed_precision_policy=policy,
      seed=1,
      **trainer_kwargs,
  )
  optimizer_config = OptimizerConfig(
      name=optimizer,
      learning_rate=learning_rate,
      warmup_steps=2,
      decay_steps=train_steps,
  )
  try:
    return Trainer(
        task=task,
        strategy=make_strategy(strategy),
        optimizer_config=optimizer_config,
        config=trainer_config,
        model_dir=str(model_dir),
    )
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")


def weights(trainer):
  return [v.numpy() for v in trainer.model.trainable_variables]


@pytest.fixture(scope="module")
def source(data_dir, tmp_path_factory):
  """A model trained 3 steps (its one checkpoint ckpt-3): the start of the
  tests of checkpoints it leaves. Read, never trained further; trained
  untraced (`helpers.eagerly`), as the tests read only what it wrote."""
  trainer = make_trainer(
      data_dir, tmp_path_factory.mktemp("source"), train_steps=3
  )
  with helpers.eagerly():
    trainer.train()
  return trainer


@pytest.mark.slow
def test_loss_falls_and_checkpoints_at_interval(data_dir, tmp_path):
  trainer = make_trainer(
      data_dir,
      tmp_path,
      train_steps=32,
      checkpoint_interval=10,
      learning_rate=0.02,
  )
  results = trainer.train()
  history = trainer.train_history
  # Loops end at 3, 6, 9, 10 (checkpoint), 13, ... and at 32 (the end).
  assert [step for step, _ in history][:5] == [3, 6, 9, 10, 13]
  assert history[-1][0] == 32 == trainer.global_step
  assert history[-1][1]["loss"] < history[0][1]["loss"] - 0.3
  assert (
      history[-1][1]["masked_lm_accuracy"] > history[0][1]["masked_lm_accuracy"]
  )
  names = sorted(f for f in os.listdir(tmp_path) if f.endswith(".index"))
  assert names == [
      "ckpt-10.index",
      "ckpt-20.index",
      "ckpt-30.index",
      "ckpt-32.index",
  ]
  assert set(results) == {
      "masked_lm_accuracy",
      "masked_lm_loss",
      "sentence_order_accuracy",
      "sentence_order_loss",
  }
  assert os.path.isdir(tmp_path / "train") and os.path.isdir(tmp_path / "eval")


def test_loss_and_metrics_on_a_hand_computed_batch():
  task = PretrainTask(
      train_file_pattern="unused",
      model_config=TINY,
      seq_length=8,
      max_predictions_per_seq=2,
  )
  # Two examples, two masked positions each; the second of example 1 is padding.
  logits = np.full((2, 2, TINY.vocab_size), -5.0, np.float32)
  logits[0, 0, 7] = logits[0, 1, 9] = logits[1, 0, 3] = (
      5.0  # right, right, wrong
  )
  sop_logits = np.array([[2.0, 0.0], [0.0, 1.0]], np.float32)
  batch = {
      "masked_lm_ids": tf.constant([[7, 9], [4, 0]]),
      "masked_lm_weights": tf.constant([[1.0, 1.0], [1.0, 0.0]]),
      "sentence_order_label": tf.constant([0, 0]),
      "input_word_ids": tf.zeros([2, 8], tf.int32),
  }
  outputs = {
      "mlm_logits": tf.constant(logits),
      "sentence_order_logits": tf.constant(sop_logits),
  }

  def nll(row, label):
    row = row.astype(np.float64)
    return -(row[label] - np.log(np.exp(row).sum()))

  mlm_nll = [nll(logits[0, 0], 7), nll(logits[0, 1], 9), nll(logits[1, 0], 4)]
  sop_ce = [nll(sop_logits[0], 0), nll(sop_logits[1], 0)]
  totals = task.loss_totals(batch)
  assert float(totals["mlm_weight"]) == 3.0 and float(totals["examples"]) == 2.0
  losses = task.compute_loss(outputs, batch, totals)
  expected_mlm = sum(mlm_nll) / (3.0 + 1e-5)
  assert float(losses["masked_lm_loss"]) == pytest.approx(
      expected_mlm, rel=1e-5
  )
  assert float(losses["sentence_order_loss"]) == pytest.approx(
      np.mean(sop_ce), rel=1e-5
  )
  assert float(losses["loss"]) == pytest.approx(
      expected_mlm + np.mean(sop_ce), rel=1e-5
  )
  metrics = task.build_metrics()
  task.update_metrics(metrics, outputs, batch)
  got = {m.name: float(m.result()) for m in metrics}
  assert got["masked_lm_accuracy"] == pytest.approx(2 / 3)
  assert got["masked_lm_loss"] == pytest.approx(np.mean(mlm_nll), rel=1e-5)
  assert got["sentence_order_accuracy"] == pytest.approx(0.5)
  assert got["sentence_order_loss"] == pytest.approx(np.mean(sop_ce), rel=1e-5)
  # In training the step's own per-example terms are reused, not recomputed.
  reused = task.build_metrics()
  doubled = dict(losses, masked_lm_nll=2.0 * losses["masked_lm_nll"])
  task.update_metrics(reused, outputs, batch, doubled)
  again = {m.name: float(m.result()) for m in reused}
  assert again["masked_lm_loss"] == pytest.approx(2 * got["masked_lm_loss"])
  for name in ("masked_lm_accuracy", "sentence_order_loss"):
    assert again[name] == pytest.approx(got[name])


def test_sentence_task_none_drops_the_sop_loss():
  task = PretrainTask(
      train_file_pattern="unused",
      model_config=TINY,
      seq_length=32,
      sentence_task="none",
  )
  assert [m.name for m in task.build_metrics()] == [
      "masked_lm_accuracy",
      "masked_lm_loss",
  ]


@pytest.mark.slow
def test_mirrored_equals_one_device(data_dir, tmp_path):
  one = make_trainer(data_dir, tmp_path / "one", train_steps=4)
  with helpers.eagerly():
    one.train()
  mirrored = make_trainer(
      data_dir, tmp_path / "mirrored", strategy="mirrored", train_steps=4
  )
  assert mirrored.strategy.num_replicas_in_sync == 2
  mirrored.train()
  for a, b in zip(weights(one), weights(mirrored)):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
  assert not np.allclose(
      weights(one)[0], weights(make_trainer(data_dir, tmp_path / "fresh"))[0]
  )  # training moved them


def test_mirrored_evaluation_pads_and_equals_one_device(data_dir, tmp_path):
  # 13 examples: one device reads batches of 8 and 5, two replicas batches
  # of 4, 4, 4 and 1; the short ones are padded to static shapes (and the
  # replicas' count to whole steps), and the padding weighs nothing.
  eval_file = tmp_path / "eval13.tfrecord"
  write_records(eval_file, 13, seed=11)
  results = {}
  for strategy in ("default", "mirrored"):
    trainer = make_trainer(
        data_dir,
        tmp_path / strategy,
        strategy=strategy,
        eval_pattern=str(eval_file),
        eval_steps=100,
    )
    results[strategy] = trainer.evaluate(step=0)
  assert results["default"].keys() == results["mirrored"].keys()
  for key, value in results["default"].items():
    assert results["mirrored"][key] == pytest.approx(value, rel=1e-5), key
  # Every real example counted once: 13 labels, each 0 or 1 correct.
  assert results["default"]["sentence_order_accuracy"] * 13 == pytest.approx(
      round(results["default"]["sentence_order_accuracy"] * 13)
  )


@pytest.mark.slow
def test_gradient_accumulation_equals_the_big_batch(data_dir, tmp_path):
  # The trainer's contract is tests/official/test_trainer.py; here the task's
  # masked-LM normaliser (the weights of the whole global batch) is checked.
  big = make_trainer(
      data_dir, tmp_path / "big", train_steps=4, optimizer="adamw"
  )
  with helpers.eagerly():
    big.train()
  accumulated = make_trainer(
      data_dir,
      tmp_path / "acc",
      train_steps=4,
      accumulation=4,
      optimizer="adamw",
  )
  assert accumulated.micro_batch_size == 2
  accumulated.train()
  for a, b in zip(weights(big), weights(accumulated)):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.slow
def test_mixed_float16_trains_with_loss_scaling(data_dir, tmp_path):
  trainer = make_trainer(
      data_dir, tmp_path, train_steps=3, policy="mixed_float16"
  )
  assert isinstance(
      trainer.optimizer, tf_keras.mixed_precision.LossScaleOptimizer
  )
  trainer.train()
  assert trainer.global_step == 3
  assert all(np.all(np.isfinite(w)) for w in weights(trainer))


def _float_dtypes(checkpoint_dir):
  dtypes = tf.train.load_checkpoint(
      str(checkpoint_dir)
  ).get_variable_to_dtype_map()
  return {name: dtype for name, dtype in dtypes.items() if dtype.is_floating}


@pytest.mark.slow
def test_bfloat16_learns_as_float32_does_and_resumes_in_either(
    data_dir, tmp_path
):
  losses = {}
  for policy in ("float32", "mixed_bfloat16"):
    trainer = make_trainer(
        data_dir,
        tmp_path / policy,
        train_steps=150,
        checkpoint_interval=75,
        steps_per_loop=25,
        policy=policy,
        learning_rate=0.01,
    )
    query = trainer.model.encoder.transformer.attention_blocks[0].query
    assert query.compute_dtype == policy.replace("mixed_", "")
    trainer.train()
    losses[policy] = [
        values["masked_lm_loss"] for _, values in trainer.train_history
    ]
    # Master weights and optimizer slots are float32 in every checkpoint.
    dtypes = _float_dtypes(tmp_path / policy)
    assert any(name.startswith("optimizer/") for name in dtypes)
    assert set(dtypes.values()) == {tf.float32}, policy
  f32, bf16 = losses["float32"], losses["mixed_bfloat16"]
  assert f32[-1] < f32[0] - 0.2  # float32 learns ...
  # ... and bfloat16 from the same seed and data lowers the loss as much.
  assert abs(bf16[-1] - f32[-1]) <= 0.05 * f32[-1], (f32, bf16)
  assert abs(bf16[0] - f32[0]) <= 0.05 * f32[0], (f32, bf16)

  # Each run resumes in the other precision, from its step and weights.
  for saved, policy in (
      ("float32", "mixed_bfloat16"),
      ("mixed_bfloat16", "float32"),
  ):
    trainer = make_trainer(
        data_dir,
        tmp_path / saved,
        train_steps=175,
        steps_per_loop=25,
        checkpoint_interval=25,
        policy=policy,
        learning_rate=0.01,
    )
    trainer.train()
    ((step, values),) = trainer.train_history
    assert step == 175
    assert abs(values["masked_lm_loss"] - losses[saved][-1]) < (
        0.1 * losses[saved][-1]
    ), (saved, values, losses[saved])
    assert set(_float_dtypes(tmp_path / saved).values()) == {tf.float32}


@pytest.mark.slow
def test_non_finite_loss_stops_and_keeps_the_last_good_checkpoint(
    data_dir, source, tmp_path
):
  model_dir = tmp_path / "model"
  shutil.copytree(source.model_dir, model_dir)
  bad_file = tmp_path / "nan.tfrecord"
  write_records(bad_file, 16, seed=3)
  # Poison the weights: NaN * nll makes the masked-LM loss NaN.
  raw = [
      tf.train.Example.FromString(r.numpy())
      for r in tf.data.TFRecordDataset(str(bad_file))
  ]
  with tf.io.TFRecordWriter(str(bad_file)) as writer:
    for example in raw:
      example.features.feature["masked_lm_weights"].float_list.value[0] = np.nan
      writer.write(example.SerializeToString())
  resumed = make_trainer(
      data_dir, model_dir, train_steps=6, train_pattern=str(bad_file)
  )
  with pytest.raises(NonFiniteLossError, match=r"non-finite loss at step 4"):
    resumed.train()
  assert resumed.checkpoint_manager.latest_checkpoint.endswith("ckpt-3")
  assert sorted(f for f in os.listdir(model_dir) if f.endswith(".index")) == [
      "ckpt-3.index"
  ]


def test_data_checks(data_dir, tmp_path):
  task = PretrainTask(
      train_file_pattern=str(tmp_path / "none-*.tfrecord"),
      model_config=TINY,
      seq_length=32,
      max_predictions_per_seq=5,
  )
  with pytest.raises(
      ValueError,
      match=r"PretrainTask.train_file_pattern .*"
      r"none-\*.tfrecord' matches no files",
  ):
    task.validate_data()
  task = PretrainTask(
      train_file_pattern=str(data_dir / "train-*.tfrecord"),
      model_config=TINY.replace(max_position_embeddings=64),
      seq_length=64,
      max_predictions_per_seq=5,
  )
  with pytest.raises(
      ValueError, match=r"input_ids has length 32 but the run expects 64"
  ):
    task.validate_data()
  with pytest.raises(ValueError, match="train_file_pattern is required"):
    PretrainTask(model_config=TINY, seq_length=32).validate_data()


@pytest.mark.slow
def test_weights_only_checkpoint_starts_a_fresh_optimizer(
    data_dir, source, tmp_path
):
  """A converted model directory without optimizer slots: weights restored,
  LAMB state fresh, training from step 0."""
  model_dir = tmp_path / "weights_only"
  tf.train.Checkpoint(model=source.model).write(str(model_dir / "ckpt-7"))
  with open(model_dir / "checkpoint", "w") as f:
    f.write('model_checkpoint_path: "ckpt-7"\n')
  trainer = make_trainer(data_dir, model_dir, train_steps=2)
  assert trainer.restore_latest() == str(model_dir / "ckpt-7")
  assert trainer.global_step == 0
  for a, b in zip(weights(source), weights(trainer)):
    np.testing.assert_array_equal(a, b)
  trainer.train()
  assert trainer.global_step == 2


@pytest.mark.slow
def test_mismatched_checkpoint_is_one_line(data_dir, tmp_path):
  other = make_trainer(data_dir, tmp_path / "b", train_steps=2)
  small = helpers.tiny_config(hidden_size=8, intermediate_size=16)
  wrong = AlbertPretrainer.from_config_object(small)
  tf.train.Checkpoint(model=wrong).write(str(tmp_path / "wrong" / "ckpt-1"))
  with pytest.raises(
      ValueError, match=r"checkpoint .*ckpt-1 does not match"
  ) as e:
    checkpoints.restore(
        other.checkpoint, other.model, str(tmp_path / "wrong" / "ckpt-1")
    )
  assert "\n" not in str(e.value)


def test_data_vocabulary_against_the_model(data_dir, tmp_path, caplog):
  """manifest.json's SentencePiece size: larger than the model's is refused
  (ids would fall outside the embedding), smaller is a warning."""
  shard_dir = tmp_path / "data"
  shard_dir.mkdir()
  write_records(shard_dir / "train-0.tfrecord", 4, seed=0)

  def check(pieces):
    (shard_dir / "manifest.json").write_text(
        f'{{"spm_model": {{"vocab_size": {pieces}}}}}'
    )
    PretrainTask(
        train_file_pattern=str(shard_dir / "train-*.tfrecord"),
        seq_length=32,
        max_predictions_per_seq=5,
        model_config=TINY,
    ).validate_data()

  with pytest.raises(
      ValueError,
      match=r"made with 65 SentencePiece pieces "
      r"but AlbertConfig.vocab_size=64: set",
  ):
    check(65)
  with caplog.at_level("WARNING", logger="absl"):
    check(60)
  assert any(
      "made with 60 SentencePiece pieces but AlbertConfig.vocab_size=64: 4 "
      "embedding rows will never be trained" in r.getMessage()
      for r in caplog.records
  )
  caplog.clear()
  check(64)
  assert not [r for r in caplog.records if "SentencePiece" in r.getMessage()]


def _optimizer_state(trainer):
  return {
      v.name: v.numpy()
      for v in trainer.optimizer.variables
      if "iteration" not in v.name
  }


@pytest.mark.slow
def test_continued_pretraining_starts_from_the_weights_and_moments(
    data_dir, source, tmp_path
):
  first_source_loss = source.train_history[0][1]["loss"]
  # The original's default: the weights only, the optimizer afresh.
  weights_only = make_trainer(
      data_dir,
      tmp_path / "w",
      train_steps=3,
      task_kwargs=dict(init_checkpoint=source.model_dir),
  )
  with weights_only.strategy.scope():
    weights_only.task.initialize(weights_only.model, weights_only.optimizer)
  for got, want in zip(weights(weights_only), weights(source)):
    np.testing.assert_array_equal(got, want)
  assert not any(np.any(m) for m in _optimizer_state(weights_only).values())
  # PretrainTask.init_optimizer_slots: LAMB's moments too.
  run = make_trainer(
      data_dir,
      tmp_path / "b",
      train_steps=3,
      task_kwargs=dict(
          init_checkpoint=source.model_dir, init_optimizer_slots=True
      ),
  )
  with run.strategy.scope():
    path = run.task.initialize(run.model, run.optimizer)
  assert path == source.latest_checkpoint()
  for got, want in zip(weights(run), weights(source)):
    np.testing.assert_array_equal(got, want)
  moments = _optimizer_state(source)
  assert any(np.any(m) for m in moments.values())
  restored = _optimizer_state(run)
  assert restored.keys() == moments.keys()
  for name, value in moments.items():
    np.testing.assert_array_equal(restored[name], value)
  assert run.global_step == 0  # a new run: its own step count and schedule
  run.train()
  assert run.global_step == 3
  # It goes on from the trained weights, not from scratch.
  assert run.train_history[0][1]["loss"] < first_source_loss


@pytest.mark.slow
def test_init_from_group0_fills_the_blocks_the_checkpoint_lacks(
    data_dir, source, tmp_path
):
  unshared = TINY.replace(sharing="none")  # a block per layer
  kwargs = dict(init_checkpoint=source.model_dir)
  run = make_trainer(
      data_dir, tmp_path / "b", model_config=unshared, task_kwargs=kwargs
  )
  with pytest.raises(
      ValueError,
      match=r"has no weight encoder/transformer/attention_blocks/1/.*"
      r"init_from_group0=True",
  ):
    with run.strategy.scope():
      run.task.initialize(run.model, run.optimizer)
  run = make_trainer(
      data_dir,
      tmp_path / "c",
      model_config=unshared,
      task_kwargs=dict(kwargs, init_from_group0=True),
  )
  with run.strategy.scope():
    run.task.initialize(run.model, run.optimizer)
  want = source.model.encoder.transformer
  got = run.model.encoder.transformer
  assert len(got.attention_blocks) == 2 == len(got.ffn_blocks)
  for blocks, source_blocks in (
      (got.attention_blocks, want.attention_blocks),
      (got.ffn_blocks, want.ffn_blocks),
  ):
    for block in blocks:  # every layer starts as the checkpoint's block 0
      for a, b in zip(block.weights, source_blocks[0].weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
  # Moments of other weights do not line up: they start from zero.
  assert not any(np.any(m) for m in _optimizer_state(run).values())


@pytest.mark.slow
def test_init_checkpoint_of_another_shape_is_refused(
    data_dir, source, tmp_path
):
  run = make_trainer(
      data_dir,
      tmp_path / "b",
      model_config=TINY.replace(intermediate_size=48),
      task_kwargs=dict(init_checkpoint=source.model_dir),
  )
  with pytest.raises(ValueError, match=r"intermediate/kernel has shape"):
    run.train()
  assert not os.path.exists(tmp_path / "b")  # nothing left of the run


@pytest.mark.slow
def test_continued_pretraining_from_a_converted_original_checkpoint(
    data_dir, tmp_path
):
  # Domain adaptation from a released TF1 checkpoint: converted with its
  # LAMB moments, then the run starts from both.
  from albert.checkpoint_conversion import original
  from tests.albert.checkpoint_conversion import (
      original_checkpoint_reference as reference,
  )

  config = reference.original_config(
      vocab_size=64,
      num_hidden_layers=2,
      num_attention_heads=2,
      max_position_embeddings=32,
  )
  folder = tmp_path / "released"
  folder.mkdir()
  arrays = reference.random_arrays(config, slots=True, global_step=9)
  reference.write_checkpoint(folder / "model.ckpt-best", arrays)
  (folder / "albert_config.json").write_text(json.dumps(config))
  original.from_original(
      checkpoint=str(folder / "model.ckpt-best"),
      albert_config=str(folder / "albert_config.json"),
      output_dir=str(tmp_path / "converted"),
      optimizer_slots=True,
  )
  run = make_trainer(
      data_dir,
      tmp_path / "run",
      train_steps=3,
      task_kwargs=dict(
          init_checkpoint=str(tmp_path / "converted"),
          init_optimizer_slots=True,
      ),
  )
  with run.strategy.scope():
    run.task.initialize(run.model, run.optimizer)
  word = run.model.encoder.embeddings.word_embeddings
  name = "bert/embeddings/word_embeddings"
  np.testing.assert_array_equal(word.numpy(), arrays[name])
  m, v = run.optimizer.slots(word)
  np.testing.assert_array_equal(m.numpy(), arrays[name + "/adam_m"])
  np.testing.assert_array_equal(v.numpy(), arrays[name + "/adam_v"])
  assert run.global_step == 0  # not the original's step 9
  run.train()
  assert run.global_step == 3
