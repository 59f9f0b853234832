"""gelu (tanh approximation) and the activation lookup."""

import math

import numpy as np
import pytest
import tensorflow as tf

from official.modeling import activations


def _numpy_gelu_tanh(x):
  return (
      0.5
      * x
      * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
  )


def test_gelu_is_the_tanh_approximation():
  x = np.linspace(-6.0, 6.0, 101).astype(np.float32)
  got = activations.gelu(tf.constant(x)).numpy()
  np.testing.assert_allclose(got, _numpy_gelu_tanh(x), rtol=1e-6, atol=1e-6)
  # It is not the exact erf form: they differ by ~1e-4 around |x| ~ 2.
  exact = activations.gelu_exact(tf.constant(x)).numpy()
  assert np.max(np.abs(got - exact)) > 1e-4


def test_hand_computed_values():
  got = activations.gelu(tf.constant([0.0, 1.0, -1.0])).numpy()
  # 0.5 * 1 * (1 + tanh(0.7978845608 * 1.044715)) = 0.8411920
  np.testing.assert_allclose(got, [0.0, 0.8411920, -0.1588080], atol=1e-6)


def test_lookup_names():
  assert activations.get_activation("gelu") is activations.gelu
  assert activations.get_activation("gelu_new") is activations.gelu
  with pytest.raises(ValueError, match=r"activation='gleu' is not one of"):
    activations.get_activation("gleu")


def _numpy_gelu_tanh_grad(x):
  c = math.sqrt(2.0 / math.pi)
  t = np.tanh(c * (x + 0.044715 * x**3))
  return 0.5 * (1 + t) + 0.5 * x * (1 - t**2) * c * (1 + 3 * 0.044715 * x**2)


def test_gelu_gradient_matches_the_derivative_and_finite_differences():
  x = np.linspace(-6.0, 6.0, 97)
  xt = tf.constant(x, tf.float64)
  with tf.GradientTape() as tape:
    tape.watch(xt)
    y = activations.gelu(xt)
  got = tape.gradient(y, xt).numpy()
  np.testing.assert_allclose(
      got, _numpy_gelu_tanh_grad(x), rtol=1e-10, atol=1e-12
  )
  h = 1e-6
  numeric = (_numpy_gelu_tanh(x + h) - _numpy_gelu_tanh(x - h)) / (2 * h)
  np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-7)


def test_gelu_under_float16():
  x = tf.constant([-2.0, 0.5, 3.0], tf.float16)
  with tf.GradientTape() as tape:
    tape.watch(x)
    y = activations.gelu(x)
  assert y.dtype == tf.float16 and tape.gradient(y, x).dtype == tf.float16
  np.testing.assert_allclose(
      y.numpy(),
      _numpy_gelu_tanh(np.array([-2.0, 0.5, 3.0])),
      rtol=2e-3,
      atol=2e-3,
  )
