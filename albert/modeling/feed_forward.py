"""`FeedForwardBlock`: the position-wise FFN with a post-LayerNorm residual."""

import tensorflow as tf
import tf_keras

from official.modeling import fusion
from official.modeling import tokenwise
from official.modeling.fusion import residual_layer_norm

from official.modeling import activations
from official.modeling.no_autograph import no_autograph


class FeedForwardBlock(tf_keras.layers.Layer):
  """LayerNorm(x + Dropout(W_2 · act(W_1 · x + b_1) + b_2)), post-LN.

  Args:
    hidden_size: H, input and output width.
    intermediate_size: inner width (4H in the released configs).
    hidden_act: activation name (`gelu` is the tanh approximation).
    initializer_range: stddev of the truncated-normal initialiser.
    dropout_rate: dropout on the FFN output.
    layer_norm_epsilon: LayerNorm epsilon.

  Call args:
    x: [B, T, H].
    hidden_shape: [B, T, H] as a shape when the caller has it (an encoder
      computes it once per call: `attention.SequenceShapes.hidden`); None:
      read from x. The fused kernels of a training step do not need it.

  Returns:
    [B, T, H] float32 (the LayerNorm runs in float32).
  """

  def __init__(
      self,
      *,
      hidden_size: int,
      intermediate_size: int,
      hidden_act: str = "gelu",
      initializer_range: float = 0.02,
      dropout_rate: float = 0.0,
      layer_norm_epsilon: float = 1e-12,
      **kwargs,
  ):
    super().__init__(**kwargs)
    self.hidden_size = hidden_size
    self.intermediate_size = intermediate_size
    self.hidden_act = hidden_act
    self.initializer_range = initializer_range
    self.dropout_rate = dropout_rate
    self.layer_norm_epsilon = layer_norm_epsilon
    self.intermediate = tf_keras.layers.Dense(
        intermediate_size,
        activation=activations.get_activation(hidden_act),
        kernel_initializer=tf_keras.initializers.TruncatedNormal(
            stddev=initializer_range
        ),
        name="intermediate",
    )
    self.output_dense = tf_keras.layers.Dense(
        hidden_size,
        kernel_initializer=tf_keras.initializers.TruncatedNormal(
            stddev=initializer_range
        ),
        name="output_dense",
    )
    self.dropout = tf_keras.layers.Dropout(dropout_rate, name="dropout")
    self.layer_norm = tf_keras.layers.LayerNormalization(
        axis=-1, epsilon=layer_norm_epsilon, dtype=tf.float32, name="layer_norm"
    )

  @no_autograph
  def call(self, x, training=None, hidden_shape=None):
    if (
        fusion.enabled()
        and self.hidden_act in ("gelu", "gelu_new")
        and self.intermediate.built
        and self.output_dense.built
    ):  # In a training step: the GELU's output recomputed, not kept.
      weights = [
          tf.cast(w, x.dtype)
          for w in (
              self.intermediate.kernel,
              self.intermediate.bias,
              self.output_dense.kernel,
              self.output_dense.bias,
          )
      ]
      out = fusion.feed_forward_gelu(x, *weights)  # [B, T, H]
    else:
      # [B, T, H] -> [B, T, FFN] -> [B, T, H]
      out = tokenwise.dense(
          x, self.intermediate, self.output_dense, shape=hidden_shape
      )
    out = self.dropout(out, training=training)
    return residual_layer_norm(self.layer_norm, x, out)

  def get_config(self):
    config = super().get_config()
    config.update(
        {
            "hidden_size": self.hidden_size,
            "intermediate_size": self.intermediate_size,
            "hidden_act": self.hidden_act,
            "initializer_range": self.initializer_range,
            "dropout_rate": self.dropout_rate,
            "layer_norm_epsilon": self.layer_norm_epsilon,
        }
    )
    return config
