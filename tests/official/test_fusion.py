"""official/modeling/fusion.py: the fused kernels against numpy, and when
they run."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from official.modeling import activations
from official.modeling import fusion
from tests.official.test_activations import _numpy_gelu_tanh
from tests.official.test_activations import _numpy_gelu_tanh_grad


def _value_and_gradient(fn, x, dy):
  with tf.GradientTape() as tape:
    tape.watch(x)
    y = fn(x)
  return y, tape.gradient(y, x, output_gradients=dy)


@pytest.mark.parametrize("dtype,tol", [("float32", 2e-6), ("bfloat16", 2e-2)])
def test_fused_gelu_against_numpy(dtype, tol):
  rng = np.random.default_rng(0)
  x = np.linspace(-6.0, 6.0, 193)
  dy = rng.normal(size=x.shape)
  x_t, dy_t = tf.cast(x, dtype), tf.cast(dy, dtype)
  y, dx = _value_and_gradient(fusion.gelu_tanh, x_t, dy_t)
  assert y.dtype == dx.dtype == tf.as_dtype(dtype)
  x = tf.cast(x_t, tf.float64).numpy()  # what the kernel was given
  dy = tf.cast(dy_t, tf.float64).numpy()
  np.testing.assert_allclose(
      tf.cast(y, tf.float64), _numpy_gelu_tanh(x), rtol=tol, atol=tol
  )
  np.testing.assert_allclose(
      tf.cast(dx, tf.float64),
      dy * _numpy_gelu_tanh_grad(x),
      rtol=tol,
      atol=tol,
  )


def _numpy_add_layer_norm(x, r, gamma, beta, dy, eps):
  """y and (dx, dgamma, dbeta) of LayerNorm(x + r) over the last axis."""
  z = x + r
  mean = z.mean(-1, keepdims=True)
  rstd = 1.0 / np.sqrt(((z - mean) ** 2).mean(-1, keepdims=True) + eps)
  n = (z - mean) * rstd
  dn = dy * gamma
  dz = rstd * (dn - dn.mean(-1, keepdims=True)) - n * rstd * (
      (dn * n).mean(-1, keepdims=True)
  )
  return n * gamma + beta, (dz, (dy * n).sum((0, 1)), dy.sum((0, 1)))


@pytest.mark.parametrize("residual_dtype", ["float32", "bfloat16"])
def test_add_layer_norm_against_numpy(residual_dtype):
  rng = np.random.default_rng(1)
  x, r, dy = (rng.normal(size=(2, 5, 16)) for _ in range(3))
  gamma, beta = rng.normal(size=16), rng.normal(size=16)
  r_t = tf.cast(r, residual_dtype)
  r = tf.cast(r_t, tf.float64).numpy()
  args = [tf.constant(a, tf.float32) for a in (x, gamma, beta)]
  with tf.GradientTape() as tape:
    tape.watch([args[0], r_t] + args[1:])
    y = fusion.add_layer_norm(args[0], r_t, args[1], args[2], 1e-6)
  dx, dr, dgamma, dbeta = tape.gradient(
      y, [args[0], r_t] + args[1:], output_gradients=tf.constant(dy, tf.float32)
  )
  want_y, (want_dz, want_dgamma, want_dbeta) = _numpy_add_layer_norm(
      x, r, gamma, beta, dy, 1e-6
  )
  assert y.dtype == tf.float32 and dr.dtype == tf.as_dtype(residual_dtype)
  np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(dx, want_dz, rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(
      tf.cast(dr, tf.float64), want_dz, rtol=1e-2, atol=2e-2
  )
  np.testing.assert_allclose(dgamma, want_dgamma, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(dbeta, want_dbeta, rtol=1e-5, atol=1e-5)


def test_plain_layer_norm_against_numpy_and_the_keras_layer():
  # Outside the kernels' scope a residual LayerNorm runs plain_layer_norm:
  # its value and (autodiff) gradients against numpy, its value against
  # the layer it stands for at ALBERT's epsilon.
  rng = np.random.default_rng(2)
  x, r, dy = (rng.normal(size=(2, 5, 16)) for _ in range(3))
  layer = tf_keras.layers.LayerNormalization(epsilon=1e-12)
  layer.build((None, None, 16))
  layer.gamma.assign(rng.normal(size=16))
  layer.beta.assign(rng.normal(size=16))
  x_t = tf.constant(x, tf.float32)
  with tf.GradientTape() as tape:
    tape.watch(x_t)
    y = fusion.residual_layer_norm(layer, x_t, tf.constant(r, tf.float32))
  dx, dgamma, dbeta = tape.gradient(
      y, [x_t, layer.gamma, layer.beta], tf.constant(dy, tf.float32)
  )
  want_y, (want_dz, want_dgamma, want_dbeta) = _numpy_add_layer_norm(
      x, r, layer.gamma.numpy(), layer.beta.numpy(), dy, 1e-12
  )
  np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(dx, want_dz, rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(dgamma, want_dgamma, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(dbeta, want_dbeta, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(y, layer(x + r), rtol=1e-5, atol=1e-5)


def test_a_layer_the_formulas_cannot_stand_for_runs_once_as_itself():
  # No centre: the layer itself computes the value, and its first call,
  # which builds it, is the only one.
  calls = []

  class Counted(tf_keras.layers.LayerNormalization):

    def call(self, inputs):
      calls.append(1)
      return super().call(inputs)

  layer = Counted(epsilon=1e-12, center=False)
  x, r = tf.random.normal([2, 3, 8]), tf.random.normal([2, 3, 8])
  y = fusion.residual_layer_norm(layer, x, r)
  assert len(calls) == 1
  np.testing.assert_allclose(y, layer(x + r), rtol=1e-6, atol=1e-6)


def test_the_kernels_run_only_inside_the_scope():
  layer = tf_keras.layers.LayerNormalization(epsilon=1e-12)
  x = tf.random.normal([2, 3, 8])
  layer(x)

  def kinds(fn):
    graph = tf.function(fn).get_concrete_function().graph
    return {op.type for op in graph.get_operations()}

  def both():
    return activations.gelu(x), fusion.residual_layer_norm(layer, x, x)

  def fused():
    with fusion.scope():
      return both()

  def off():
    with fusion.scope(False):
      return both()

  assert "Tanh" in kinds(both) and "Tanh" in kinds(off)
  assert "Tanh" not in kinds(fused)  # inside the compiled functions
  assert not fusion.enabled()
  # The same values either way.
  for a, b in zip(tf.function(both)(), tf.function(fused)()):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def _plain_attention(q, k, v, key_bias, scale):
  scores = tf.einsum("bntd,bnsd->bnts", q, k) * scale + key_bias
  return tf.einsum("bnts,bnsd->btnd", tf.nn.softmax(scores, axis=-1), v)


def test_attention_against_numpy_and_autodiff():
  rng = np.random.default_rng(2)
  q, k, v = (
      tf.constant(rng.normal(size=(2, 3, 5, 4)), tf.float32) for _ in range(3)
  )  # [B, N, T, D]
  dc = tf.constant(rng.normal(size=(2, 5, 3, 4)), tf.float32)  # [B, T, N, D]
  mask = np.ones((2, 5), np.float32)
  mask[1, 3:] = 0.0  # the second example's last two keys are padding
  key_bias = tf.constant((1.0 - mask)[:, None, None, :] * -10000.0)
  scale = 0.5

  def grads(fn):
    with tf.GradientTape() as tape:
      tape.watch([q, k, v])
      out = fn(q, k, v, key_bias, scale)
    return out, tape.gradient(out, [q, k, v], output_gradients=dc)

  out, fused = grads(fusion.attention)
  s = np.einsum("bntd,bnsd->bnts", q, k) * scale + key_bias.numpy()
  p = np.exp(s - s.max(-1, keepdims=True))
  p /= p.sum(-1, keepdims=True)
  np.testing.assert_allclose(
      out, np.einsum("bnts,bnsd->btnd", p, v), rtol=1e-5, atol=1e-6
  )
  # Padding keys get no weight, so their values get no gradient.
  assert np.abs(fused[2].numpy()[1, :, 3:]).max() < 1e-6
  _, plain = grads(_plain_attention)
  for a, b in zip(plain, fused):
    np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


def test_attention_keeps_no_probabilities():
  # The backward pass multiplies q by k again: two products forward
  # (scores, context) and five in the gradient function (scores again, dv,
  # dprobs, dq, dk), one more than autodiff of the same formula; and the
  # recomputation waits for the incoming gradient.
  q = tf.random.normal([1, 2, 4, 3])

  def products(fn):
    @tf.function
    def step(q):
      with tf.GradientTape() as tape:
        tape.watch(q)
        out = fn(q, q, q, tf.zeros([1, 1, 1, 4]), 0.5)
      return tape.gradient(out, q)

    graph = step.get_concrete_function(q).graph
    return [
        op
        for op in graph.get_operations()
        if op.type in ("Einsum", "BatchMatMulV2")
    ]

  fused = products(fusion.attention)
  assert len(fused) == len(products(_plain_attention)) + 1
  scores = [op for op in fused if op.get_attr("equation") == b"bntd,bnsd->bnts"]
  # Forward scores, recomputed scores (after the gradient), d probs.
  waits = [
      bool(op.control_inputs) or any(i.op.control_inputs for i in op.inputs)
      for op in scores
  ]
  assert waits == [False, True, False]


def test_feed_forward_against_numpy_and_autodiff():
  rng = np.random.default_rng(3)
  x = tf.constant(rng.normal(size=(2, 3, 4)), tf.float32)
  weights = [
      tf.constant(rng.normal(size=shape) * 0.5, tf.float32)
      for shape in ((4, 6), (6,), (6, 5), (5,))
  ]
  dy = tf.constant(rng.normal(size=(2, 3, 5)), tf.float32)

  def plain(x, w1, b1, w2, b2):
    return activations.gelu(x @ w1 + b1) @ w2 + b2

  def grads(fn):
    with tf.GradientTape() as tape:
      tape.watch([x] + weights)
      out = fn(x, *weights)
    return out, tape.gradient(out, [x] + weights, output_gradients=dy)

  out, fused = grads(fusion.feed_forward_gelu)
  w1, b1, w2, b2 = (w.numpy().astype(np.float64) for w in weights)
  want = _numpy_gelu_tanh(x.numpy() @ w1 + b1) @ w2 + b2
  np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
  _, reference = grads(plain)
  for a, b in zip(reference, fused):
    np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


def test_under_xla_the_recomputations_stay():
  # XLA drops control edges and would merge a recomputation with the
  # forward pass (common-subexpression elimination), keeping what it was
  # meant to drop; an optimization barrier did not prevent it. The
  # optimised HLO computes the softmax's exp and the GELU's tanh twice: once
  # forward and once recomputed. (The incoming gradient is an input, as in a
  # training step: a constant one would let XLA fold `fusion.after` away.)
  q = tf.random.normal([1, 2, 4, 3])
  x = tf.random.normal([2, 3, 4])
  weights = [tf.random.normal(s) for s in ((4, 6), (6,), (6, 4), (4,))]

  def hlo(fn, *args):
    @tf.function(jit_compile=True)
    def step(dy, *args):
      with tf.GradientTape() as tape:
        tape.watch(args)
        out = fn(*args)
      return out, tape.gradient(out, args, output_gradients=dy)

    dy = tf.random.normal(fn(*args).shape)
    return step.experimental_get_compiler_ir(dy, *args)(stage="optimized_hlo")

  def attention(q):
    return fusion.attention(q, q, q, tf.zeros([1, 1, 1, 4]), 0.5)

  assert hlo(attention, q).count(" exponential(") == 2
  assert hlo(fusion.feed_forward_gelu, x, *weights).count(" tanh(") == 2


def test_sparse_cross_entropy_against_numpy():
  rng = np.random.default_rng(3)
  logits = rng.normal(scale=4.0, size=(2, 3, 11))
  labels = rng.integers(0, 11, size=(2, 3))
  dnll = rng.normal(size=(2, 3))
  logits_t = tf.constant(logits, tf.float32)
  with tf.GradientTape() as tape:
    tape.watch(logits_t)
    nll = fusion.sparse_cross_entropy(tf.constant(labels), logits_t)
  dlogits = tape.gradient(
      nll, logits_t, output_gradients=tf.constant(dnll, tf.float32)
  )
  shifted = logits - logits.max(-1, keepdims=True)
  log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
  onehot = np.eye(11)[labels]
  assert nll.dtype == dlogits.dtype == tf.float32
  np.testing.assert_allclose(
      nll, -(log_probs * onehot).sum(-1), rtol=1e-5, atol=1e-5
  )
  np.testing.assert_allclose(
      dlogits,
      (np.exp(log_probs) - onehot) * dnll[..., None],
      rtol=1e-5,
      atol=1e-6,
  )
