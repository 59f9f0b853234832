"""`MaskedLMHead`: predicts the original token at each masked position."""

import tensorflow as tf
import tf_keras

from official.modeling import activations
from official.modeling.no_autograph import no_autograph


class MaskedLMHead(tf_keras.layers.Layer):
  """dense H -> E, activation, LayerNorm, then the tied [V, E] table + bias.

  The output projection reuses the word-embedding matrix (weight tying, as in
  BERT and ALBERT), so the head only owns the transform and a [V] bias. It is
  evaluated only at `masked_lm_positions`, never on the whole sequence.

  Args:
    embedding_table: the encoder's [V, E] word-embedding variable.
    activation: activation name of the transform (`gelu`, tanh approximation).
    initializer_range: stddev of the truncated-normal initialiser.
    layer_norm_epsilon: LayerNorm epsilon.

  Call args:
    sequence_output: [B, T, H].
    masked_lm_positions: int [B, P] positions to predict; None when
      `sequence_output` is already [B, P, H], the states at them.

  Returns:
    [B, P, V] float32 logits.
  """

  def __init__(
      self,
      *,
      embedding_table: tf.Variable,
      activation: str = "gelu",
      initializer_range: float = 0.02,
      layer_norm_epsilon: float = 1e-12,
      **kwargs,
  ):
    super().__init__(**kwargs)
    self.embedding_table = embedding_table
    self.activation = activation
    self.initializer_range = initializer_range
    self.layer_norm_epsilon = layer_norm_epsilon
    vocab_size, embedding_size = embedding_table.shape
    self.dense = tf_keras.layers.Dense(
        embedding_size,
        activation=activations.get_activation(activation),
        kernel_initializer=tf_keras.initializers.TruncatedNormal(
            stddev=initializer_range
        ),
        name="dense",
    )
    self.layer_norm = tf_keras.layers.LayerNormalization(
        axis=-1, epsilon=layer_norm_epsilon, dtype=tf.float32, name="layer_norm"
    )
    self._vocab_size = vocab_size

  def build(self, input_shape=None):
    self.output_bias = self.add_weight(
        name="output_bias",
        shape=[self._vocab_size],
        initializer="zeros",
        dtype=tf.float32,
        experimental_autocast=False,
    )
    super().build(input_shape)

  @no_autograph
  def call(self, sequence_output, masked_lm_positions=None):
    x = sequence_output
    if masked_lm_positions is not None:
      positions = tf.cast(masked_lm_positions, tf.int32)
      x = tf.gather(x, positions, batch_dims=1)  # [B, T, H] -> [B, P, H]
    x = self.layer_norm(self.dense(x))  # [B, P, H] -> [B, P, E]
    table = tf.cast(self.embedding_table, self.compute_dtype)  # [V, E]
    # One [B*P, E] x [E, V] product: a batched [B, P, E] x [V, E]^T product
    # broadcasts the table, and its gradient materialises [B, V, E] before
    # summing over B (491 MB in float32 for ALBERT-base at batch 32).
    flat = tf.reshape(
        tf.cast(x, self.compute_dtype), [-1, tf.shape(x)[-1]]
    )  # [B, P, E] -> [B*P, E]
    logits = tf.matmul(flat, table, transpose_b=True)  # [B*P, V]
    logits = tf.reshape(
        logits, tf.concat([tf.shape(x)[:-1], [self._vocab_size]], 0)
    )  # [B, P, V]
    return tf.cast(logits, tf.float32) + self.output_bias

  def get_config(self):
    # `embedding_table` is a live variable, tied by the owning model; the
    # pretrainer's config rebuilds it.
    config = super().get_config()
    config.update(
        {
            "activation": self.activation,
            "initializer_range": self.initializer_range,
            "layer_norm_epsilon": self.layer_norm_epsilon,
        }
    )
    return config
