"""gelu (tanh approximation) and the activation lookup."""

import math

import numpy as np
import pytest
import tensorflow as tf

from official.modeling import activations


def _numpy_gelu_tanh(x):
  return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) *
                                  (x + 0.044715 * x ** 3)))


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
