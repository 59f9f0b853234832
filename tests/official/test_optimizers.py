"""LAMB and AdamW against a numpy reference (docs/reference.md section 5)."""

import numpy as np
import pytest
import tensorflow as tf

from official.optimization.adamw import AdamW
from official.optimization.lamb import Lamb
from official.optimization.lr_schedule import WarmupPolynomialDecay

B1, B2, EPS, WD = 0.9, 0.999, 1e-6, 0.01
EXCLUDED = ("LayerNorm", "layer_norm", "bias")


def _reference_step(w, g, m, v, lr, step, *, decay, adapt, bias_correction):
  """One update of the original LAMB (float64), written from the formula."""
  m = B1 * m + (1 - B1) * g
  v = B2 * v + (1 - B2) * g * g
  m_hat, v_hat = m, v
  if bias_correction:
    m_hat = m / (1 - B1**step)
    v_hat = v / (1 - B2**step)
  u = m_hat / (np.sqrt(v_hat) + EPS)
  if decay:
    u = u + WD * w
  w_norm, u_norm = np.linalg.norm(w), np.linalg.norm(u)
  r = w_norm / u_norm if (adapt and w_norm > 0 and u_norm > 0) else 1.0
  return w - lr * r * u, m, v


# name -> (initial value, excluded from decay and adaptation)
def _variables(rng):
  return {
      "encoder/layer_0/dense/kernel": (rng.normal(size=(4, 3)), False),
      "encoder/layer_0/dense/bias": (rng.normal(size=(3,)), True),
      "encoder/attention/layer_norm/gamma": (1 + rng.normal(size=(3,)), True),
      "bert/embeddings/LayerNorm/beta": (rng.normal(size=(3,)), True),
      "encoder/word_embeddings": (rng.normal(size=(5, 2)), False),
      "head/zero_init/kernel": (np.zeros((2, 2)), False),  # ||w|| = 0 -> r = 1
  }


def _run(
    optimizer_cls,
    *,
    adapt_all,
    bias_correction,
    steps=6,
    lr=None,
    sparse_name="encoder/word_embeddings",
):
  rng = np.random.default_rng(0)
  spec = _variables(rng)
  tf_vars = {
      n: tf.Variable(v.astype(np.float32), name=n) for n, (v, _) in spec.items()
  }
  lr = 0.01 if lr is None else lr  # a float or a schedule of the step
  opt = optimizer_cls(learning_rate=lr, bias_correction=bias_correction)
  np_state = {n: [v.astype(np.float64), 0.0, 0.0] for n, (v, _) in spec.items()}
  for t in range(steps):
    grads = {n: rng.normal(size=v.shape) for n, (v, _) in spec.items()}
    pairs = []
    for n, g in grads.items():
      if n == sparse_name:
        # Rows 1 and 3 only, row 3 twice: an embedding lookup's IndexedSlices.
        idx = np.array([1, 3, 3])
        vals = rng.normal(size=(3, g.shape[1]))
        dense = np.zeros_like(g)
        np.add.at(dense, idx, vals)
        grads[n] = dense
        g_tf = tf.IndexedSlices(
            tf.constant(vals, tf.float32),
            tf.constant(idx),
            tf.constant(g.shape),
        )
      else:
        g_tf = tf.constant(g, tf.float32)
      pairs.append((g_tf, tf_vars[n]))
    opt.apply_gradients(pairs)
    # Keras evaluates a schedule at the step count before the update.
    step_lr = float(lr(t)) if callable(lr) else lr
    for n, (_, excluded) in spec.items():
      w, m, v = np_state[n]
      np_state[n] = list(
          _reference_step(
              w,
              grads[n],
              m,
              v,
              step_lr,
              t + 1,
              decay=not excluded,
              adapt=(not excluded) and not adapt_all,
              bias_correction=bias_correction,
          )
      )
  return tf_vars, np_state


@pytest.mark.parametrize("bias_correction", [False, True])
def test_lamb_matches_numpy(bias_correction):
  tf_vars, np_state = _run(
      Lamb, adapt_all=False, bias_correction=bias_correction
  )
  for name, var in tf_vars.items():
    np.testing.assert_allclose(
        var.numpy(), np_state[name][0], rtol=2e-5, atol=2e-6, err_msg=name
    )


def test_adamw_matches_numpy_with_trust_ratio_one():
  tf_vars, np_state = _run(AdamW, adapt_all=True, bias_correction=False)
  for name, var in tf_vars.items():
    np.testing.assert_allclose(
        var.numpy(), np_state[name][0], rtol=2e-5, atol=2e-6, err_msg=name
    )


def test_lamb_with_schedule_matches_numpy():
  schedule = WarmupPolynomialDecay(0.05, decay_steps=8, warmup_steps=3)
  rates = [float(schedule(t)) for t in range(8)]
  np.testing.assert_allclose(
      rates,
      [0.05 * t / 3 for t in range(3)]
      + [0.05 * (1 - t / 8) for t in range(3, 8)],
      rtol=1e-6,
  )
  tf_vars, np_state = _run(
      Lamb, adapt_all=False, bias_correction=False, lr=schedule, steps=8
  )
  for name, var in tf_vars.items():
    np.testing.assert_allclose(
        var.numpy(), np_state[name][0], rtol=2e-5, atol=2e-6, err_msg=name
    )
  # The schedule is what moved the weights: a constant rate ends elsewhere.
  constant, _ = _run(
      Lamb, adapt_all=False, bias_correction=False, lr=0.05, steps=8
  )
  kernel = "encoder/layer_0/dense/kernel"
  assert not np.allclose(
      constant[kernel].numpy(), tf_vars[kernel].numpy(), atol=1e-4
  )


def test_lamb_differs_from_adamw():
  """The trust ratio matters: a guard against adaptation silently off."""
  lamb_vars, _ = _run(Lamb, adapt_all=False, bias_correction=False)
  adamw_vars, _ = _run(AdamW, adapt_all=True, bias_correction=False)
  kernel = "encoder/layer_0/dense/kernel"
  assert not np.allclose(lamb_vars[kernel].numpy(), adamw_vars[kernel].numpy())
  bias = "encoder/layer_0/dense/bias"  # excluded: identical updates
  np.testing.assert_allclose(
      lamb_vars[bias].numpy(), adamw_vars[bias].numpy(), rtol=1e-6
  )


def test_exclusion_patterns():
  opt = Lamb()
  assert opt.applies_weight_decay("enc/attention_0/query/kernel:0")
  assert opt.applies_layer_adaptation("enc/attention_0/query/kernel:0")
  for name in (
      "enc/attention_0/layer_norm/gamma:0",
      "bert/LayerNorm/beta:0",
      "enc/pooler/bias:0",
      "cls/predictions/output_bias:0",
  ):
    assert not opt.applies_weight_decay(name), name
    assert not opt.applies_layer_adaptation(name), name
  custom = Lamb(
      exclude_from_weight_decay=["gamma"],
      exclude_from_layer_adaptation=["kernel"],
  )
  assert not custom.applies_weight_decay("x/gamma:0")
  assert custom.applies_weight_decay("x/bias:0")
  assert not custom.applies_layer_adaptation("x/kernel:0")
  assert not Lamb(weight_decay_rate=0.0).applies_weight_decay("x/kernel:0")


def test_defaults_and_config_round_trip():
  opt = Lamb()
  assert (opt.beta_1, opt.beta_2, opt.epsilon, opt.weight_decay_rate) == (
      0.9,
      0.999,
      1e-6,
      0.01,
  )
  assert not opt.bias_correction
  clone = Lamb.from_config(
      Lamb(
          learning_rate=0.1,
          bias_correction=True,
          exclude_from_weight_decay=["x"],
      ).get_config()
  )
  assert clone.bias_correction and clone.exclude_from_weight_decay == ("x",)
  assert AdamW.from_config(AdamW().get_config()).weight_decay_rate == 0.01


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(beta_1=1.0), "beta_1=1.0"),
        (dict(epsilon=0.0), "epsilon=0.0"),
        (dict(weight_decay_rate=-1.0), "weight_decay_rate=-1.0"),
        (dict(global_clipnorm=1.0), "clip in the training step"),
    ],
)
def test_bad_arguments(kwargs, message):
  with pytest.raises(ValueError, match=message):
    Lamb(**kwargs)


def test_slots_are_the_moments_of_that_variable():
  a = tf.Variable(np.ones((2, 3), np.float32), name="a/kernel")
  b = tf.Variable(np.ones((3,), np.float32), name="b/kernel")
  opt = Lamb(learning_rate=0.01)
  ga = np.arange(6, dtype=np.float32).reshape(2, 3)
  gb = -np.arange(3, dtype=np.float32) - 1.0
  opt.apply_gradients([(tf.constant(ga), a), (tf.constant(gb), b)])
  for var, g in ((a, ga), (b, gb)):
    m, v = opt.slots(var)
    np.testing.assert_allclose(m.numpy(), (1 - B1) * g, rtol=1e-6)
    np.testing.assert_allclose(v.numpy(), (1 - B2) * g * g, rtol=1e-4)
  with pytest.raises(ValueError, match="c/kernel.*has no LAMB slots"):
    opt.slots(tf.Variable(np.ones((3,), np.float32), name="c/kernel"))


@pytest.mark.parametrize("optimizer_cls", [Lamb, AdamW])
def test_one_write_per_variable_and_slot_per_step(optimizer_cls):
  # A traced step writes each variable once (no tf_keras decay of w * 0 on
  # top of this update) and each moment once, and reads nothing it has
  # just computed: the graph every training step traces stays small.
  variables = [
      tf.Variable(np.ones(shape, np.float32), name=name)
      for name, shape in (("a/kernel", (2, 3)), ("a/bias", (3,)))
  ]
  opt = optimizer_cls(learning_rate=0.01)
  opt.build(variables)

  @tf.function
  def step(grads):
    opt.apply_gradients(zip(grads, variables))

  graph = step.get_concrete_function(
      [tf.TensorSpec(v.shape, tf.float32) for v in variables]
  ).graph
  types = [op.type for op in graph.get_operations()]
  assert types.count("AssignSubVariableOp") == len(variables)
  # m and v of each variable, and the iteration count.
  assert types.count("AssignVariableOp") == 2 * len(variables)
  assert types.count("AssignAddVariableOp") == 1
  # The variable once, and the learning rate once per variable.
  assert types.count("ReadVariableOp") <= 4 * len(variables) + 2, types
