"""Activation functions, looked up by the names configs use."""

from typing import Callable

import tensorflow as tf

from official.modeling import fusion


@tf.custom_gradient
def _gelu_tanh(x):
  y = 0.5 * x * (1.0 + fusion.gelu_tanh_inner(x))

  def grad(dy):
    # Recomputed from x alone, so the backward pass keeps one tensor per call
    # instead of every intermediate of the formula (the FFN's largest cost).
    return dy * fusion.gelu_tanh_slope(x, fusion.gelu_tanh_inner(x))

  return y, grad


def gelu(x: tf.Tensor) -> tf.Tensor:
  """GELU, tanh approximation (Hendrycks & Gimpel 2016), as in original ALBERT.

  0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))). Hugging Face calls
  this `gelu_new`; the original BERT/ALBERT code calls it `gelu`. The gradient
  is written by hand and recomputes the tanh, saving activation memory; in
  a training step with `official.modeling.fusion` on, both passes are fused.
  """
  if fusion.enabled():
    return fusion.gelu_tanh(tf.convert_to_tensor(x))
  return _gelu_tanh(tf.convert_to_tensor(x))


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
    raise ValueError(
        f"activation={name!r} is not one of {ACTIVATION_NAMES}"
    ) from None
