"""Activation functions, looked up by the names configs use."""

import math
from typing import Callable

import tensorflow as tf


def gelu(x: tf.Tensor) -> tf.Tensor:
  """GELU, tanh approximation (Hendrycks & Gimpel 2016), as in original ALBERT.

  0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))). Hugging Face calls
  this `gelu_new`; the original BERT/ALBERT code calls it `gelu`.
  """
  x = tf.convert_to_tensor(x)
  coeff = tf.cast(math.sqrt(2.0 / math.pi), x.dtype)
  cubic = tf.cast(0.044715, x.dtype) * tf.pow(x, 3)
  return 0.5 * x * (1.0 + tf.tanh(coeff * (x + cubic)))


def gelu_exact(x: tf.Tensor) -> tf.Tensor:
  """GELU with the exact Gaussian CDF: x * Phi(x) (ALBERT v1 configs on HF)."""
  return tf.nn.gelu(x, approximate=False)


_ACTIVATIONS = {
    "gelu": gelu,
    "gelu_new": gelu,  # Hugging Face's name for the tanh approximation.
    "gelu_exact": gelu_exact,
    "relu": tf.nn.relu,
    "tanh": tf.tanh,
    "swish": tf.nn.silu,
}

ACTIVATION_NAMES = tuple(sorted(_ACTIVATIONS))


def get_activation(name: str) -> Callable[[tf.Tensor], tf.Tensor]:
  """Returns the activation function called `name`."""
  try:
    return _ACTIVATIONS[name]
  except KeyError:
    raise ValueError(f"activation={name!r} is not one of {ACTIVATION_NAMES}") \
        from None
