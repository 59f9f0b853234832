"""TrainerConfig.recompute and TrainerConfig.fused_kernels: the same
gradients, weights and checkpoints as the plain step
(official/modeling/recompute.py and fusion.py, SharedTransformerBlock)."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from albert.modeling.classifier import AlbertClassifier
from albert.modeling.encoder import AlbertEncoder
from albert.modeling.pretrainer import AlbertPretrainer
from official.modeling import fusion
from official.modeling import recompute
from tests.albert.pretraining.test_training import data_dir  # noqa: F401 (fixture)
from tests.albert.pretraining.test_training import make_trainer
from tests.albert.pretraining.test_training import weights
from tests import helpers

TINY = dict(
    vocab_size=60,
    embedding_size=8,
    hidden_size=32,
    num_layers=3,
    num_heads=4,
    intermediate_size=64,
    max_position_embeddings=16,
)


def _inputs():
  rng = np.random.default_rng(0)
  ids = rng.integers(5, TINY["vocab_size"], size=(3, 12))
  mask = np.ones_like(ids)
  mask[1, 7:] = 0
  return {
      "input_word_ids": tf.constant(ids, tf.int32),
      "input_mask": tf.constant(mask, tf.int32),
      "input_type_ids": tf.constant(
          np.arange(12)[None].repeat(3, 0) > 5, tf.int32
      ),
      "masked_lm_positions": tf.constant([[1, 2], [3, 4], [5, 0]], tf.int32),
  }


def _gradients(model, loss_of, on, jit, inputs=None, fused=False):
  """One step's gradients. The plain step, the reference, runs eagerly
  (`helpers.eagerly`, so `jit` does not apply to it: an XLA step is held to
  the untraced gradients); every other step is traced."""
  inputs = _inputs() if inputs is None else inputs

  @tf.function(jit_compile=jit)
  def step(inputs):
    with tf.GradientTape() as tape:
      with recompute.scope(on, model), fusion.scope(fused):
        loss = loss_of(model(inputs, training=True))
    return tape.gradient(loss, model.trainable_variables)

  with helpers.eagerly(not (on or fused)):
    return [tf.convert_to_tensor(g).numpy() for g in step(inputs)]


def _pretrainer_loss(out):
  return tf.reduce_mean(tf.math.log_softmax(out["mlm_logits"])[..., 7]) + (
      tf.reduce_mean(out["sentence_order_logits"] ** 2)
  )


@pytest.mark.parametrize(
    "sharing,groups,jit",
    [("all", 1, False), ("all", 1, True), ("none", 1, False), ("all", 3, True)],
)
def test_recomputed_gradients_equal_the_plain_ones(sharing, groups, jit):
  model = AlbertPretrainer(
      AlbertEncoder(**TINY, sharing=sharing, num_hidden_groups=groups)
  )
  model(_inputs())
  plain = _gradients(model, _pretrainer_loss, False, jit)
  again = _gradients(model, _pretrainer_loss, True, jit)
  scale = max(float(np.abs(g).max()) for g in plain)
  assert scale > 0
  for v, a, b in zip(model.trainable_variables, plain, again):
    np.testing.assert_allclose(b, a, atol=1e-6 * scale, err_msg=v.name)


@pytest.mark.parametrize(
    "policy,recomputed,jit",
    [
        ("float32", False, False),
        ("float32", True, False),
        ("float32", False, True),
        ("mixed_bfloat16", False, False),
    ],
)
def test_fused_kernels_give_the_plain_gradients(policy, recomputed, jit):
  tf_keras.mixed_precision.set_global_policy(policy)
  try:
    model = AlbertPretrainer(AlbertEncoder(**TINY))
    model(_inputs())
    plain = _gradients(model, _pretrainer_loss, False, jit)
    fused = _gradients(model, _pretrainer_loss, recomputed, jit, fused=True)
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")
  scale = max(float(np.abs(g).max()) for g in plain)
  # bfloat16: the plain GELU rounds each step of its formula to bfloat16.
  tol = 1e-5 if policy == "float32" else 2e-2
  for v, a, b in zip(model.trainable_variables, plain, fused):
    np.testing.assert_allclose(b, a, atol=tol * scale, err_msg=v.name)


def test_fine_tuning_models_recompute_too():
  # No dropout in the head either: two calls would draw two masks.
  model = AlbertClassifier(
      AlbertEncoder(**TINY), num_classes=3, dropout_rate=0.0
  )
  inputs = _inputs()
  del inputs["masked_lm_positions"]
  model(inputs)

  def loss_of(outputs):
    return tf.reduce_sum(tf.nn.log_softmax(outputs["logits"])[:, 1])

  plain = _gradients(model, loss_of, False, False, inputs)
  again = _gradients(model, loss_of, True, False, inputs)
  for a, b in zip(plain, again):
    np.testing.assert_allclose(b, a, atol=1e-6)


def test_bfloat16_recomputes_the_same_step():
  tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
  try:
    model = AlbertPretrainer(AlbertEncoder(**TINY))
    model(_inputs())
    plain = _gradients(model, _pretrainer_loss, False, False)
    again = _gradients(model, _pretrainer_loss, True, False)
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")
  scale = max(float(np.abs(g).max()) for g in plain)
  for a, b in zip(plain, again):
    np.testing.assert_allclose(b, a, atol=1e-2 * scale)


def test_dropout_is_refused_in_one_line():
  model = AlbertEncoder(**{**TINY, "dropout_rate": 0.1})
  with pytest.raises(ValueError) as raised:
    with recompute.scope(True, model):
      pass
  assert str(raised.value).startswith(
      "TrainerConfig.recompute=True cannot recompute the transformer blocks "
      "with dropout (dropout_rate=0.1)"
  )
  assert "\n" not in str(raised.value)
  with recompute.scope(False, model):  # Off: nothing to refuse.
    pass
  assert recompute.scope(True, AlbertEncoder(**TINY))  # No dropout.


@pytest.mark.slow
def test_trainer_with_recompute_trains_the_same_weights(data_dir, tmp_path):  # noqa: F811
  plain = make_trainer(data_dir, tmp_path / "plain", train_steps=4)
  with helpers.eagerly():
    plain.train()
  again = make_trainer(
      data_dir, tmp_path / "recompute", train_steps=4, recompute=True
  )
  again.train()
  for a, b in zip(weights(plain), weights(again)):
    np.testing.assert_allclose(b, a, atol=2e-6, rtol=1e-4)
  # The checkpoints hold the same variables: either restores the other.
  names = [
      sorted(n for n, _ in tf.train.list_variables(str(d / "ckpt-4")))
      for d in (tmp_path / "plain", tmp_path / "recompute")
  ]
  assert names[0] == names[1]


def test_the_backward_pass_runs_the_blocks_again():
  # Not a no-op: the step's graph computes each block's matrix products a
  # second time (in the gradient of the recomputed block).
  model = AlbertPretrainer(AlbertEncoder(**TINY))
  model(_inputs())

  def products(on):
    @tf.function
    def step(inputs):
      with tf.GradientTape() as tape:
        with recompute.scope(on, model):
          loss = _pretrainer_loss(model(inputs, training=True))
      return tape.gradient(loss, model.trainable_variables)

    graph = step.get_concrete_function(_inputs()).graph
    count = 0
    for op in graph.get_operations():
      functions = [graph._get_function(n) for n in _called_functions(op)]
      count += op.type in ("MatMul", "BatchMatMulV2")
      for function in functions:
        if function is not None:
          count += sum(
              o.type in ("MatMul", "BatchMatMulV2")
              for o in function.graph.get_operations()
          )
    return count

  plain, again = products(False), products(True)
  # A block's forward has 6 matrix-product ops here (the dense layers of
  # attention and FFN, and the two attention products); recomputed, each
  # block runs them once more.
  assert again - plain == 6 * TINY["num_layers"], (plain, again)


def _called_functions(op):
  names = []
  for attr in ("f", "then_branch", "else_branch", "body", "cond"):
    try:
      names.append(op.get_attr(attr).name)
    except (ValueError, AttributeError):
      pass
  return names


def test_under_xla_the_backward_pass_runs_the_blocks_again():
  # XLA drops control edges and merges common subexpressions: without
  # `fusion.after` the recomputed blocks were folded back into the forward
  # pass and kept alive, and recomputation saved nothing under XLA.
  model = AlbertPretrainer(AlbertEncoder(**TINY))
  model(_inputs())

  def products(on):
    @tf.function(jit_compile=True)
    def step(inputs):
      with tf.GradientTape() as tape:
        with recompute.scope(on, model):
          loss = _pretrainer_loss(model(inputs, training=True))
      return tape.gradient(loss, model.trainable_variables)

    hlo = step.experimental_get_compiler_ir(_inputs())(stage="optimized_hlo")
    return hlo.count(" dot(")

  plain, again = products(False), products(True)
  # At least each block's 6 products again (XLA may split others); with
  # only an optimization barrier it was 7 more in all, not 18.
  assert again - plain >= 6 * TINY["num_layers"], (plain, again)
