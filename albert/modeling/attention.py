"""`AttentionBlock`: multi-head self-attention, post-LayerNorm residual."""

import math
from typing import NamedTuple, Optional

import tensorflow as tf
import tf_keras

from official.modeling import fusion
from official.modeling import tokenwise
from official.modeling.fusion import residual_layer_norm
from official.modeling.no_autograph import no_autograph

# Added to the attention scores of padded keys, as in the original ALBERT.
MASK_ADDER = -10000.0


class SequenceShapes(NamedTuple):
  """What every block of one encoder call reshapes to, computed once per
  call (`sequence_shapes`) instead of by each of the L shared-layer calls
  from its own inputs: with a dynamic length that bookkeeping (a Shape,
  slices and a Pack per reshape) was about half of the graph's ops.

  hidden: [B, T, H] as a shape.
  heads: [B, T, N, D] as a shape.
  key_bias: [B, 1, 1, T] float32, MASK_ADDER at padded keys, else 0;
    None when made without a mask (the shapes of `query_positions`' rows,
    which only reshape). An AttentionBlock needs it in the `shapes` it is
    given.
  """

  hidden: tokenwise.Shape
  heads: tokenwise.Shape
  key_bias: Optional[tf.Tensor]


def sequence_shapes(
    x: tf.Tensor, attention_mask: Optional[tf.Tensor], num_heads: int
) -> SequenceShapes:
  """`SequenceShapes` of x ([B, T, H], static H) for `num_heads` heads;
  attention_mask [B, T] (1 for real tokens) or None."""
  batch, length = tokenwise.leading_dims(x, 2)
  hidden = x.shape[-1]
  key_bias = None
  if attention_mask is not None:
    key_mask = tf.cast(attention_mask, tf.float32)[:, tf.newaxis, tf.newaxis]
    key_bias = (1.0 - key_mask) * MASK_ADDER  # [B, 1, 1, T]
  return SequenceShapes(
      hidden=tokenwise.as_shape([batch, length, hidden]),
      heads=tokenwise.as_shape([batch, length, num_heads, hidden // num_heads]),
      key_bias=key_bias,
  )


class AttentionBlock(tf_keras.layers.Layer):
  """LayerNorm(x + Dropout(W_o · MultiHeadSelfAttention(x))), post-LN.

  Scaled dot-product attention (Vaswani et al., 2017, section 3.2) with H x H
  query, key, value and output projections (the original checkpoint's shapes).
  Scores, mask and softmax are computed in float32 under mixed precision; the
  LayerNorm is float32 too, so the residual stream leaves this block in float32.

  Args:
    hidden_size: H.
    num_heads: N; must divide H.
    initializer_range: stddev of the truncated-normal initialiser.
    dropout_rate: dropout on the projected attention output.
    attention_dropout_rate: dropout on the attention probabilities.
    layer_norm_epsilon: LayerNorm epsilon.

  Call args:
    x: [B, T, H] hidden states.
    attention_mask: [B, T], 1 for real tokens and 0 for padding (keys);
      not read when `shapes` is given (its `key_bias` holds the mask).
    query_positions: optional int [B, Q]: compute the output only at these
      rows of x (queries and residual from them; keys and values from all
      of x). Each row's value is the one the full block gives it.
    shapes: `sequence_shapes(x, attention_mask, num_heads)` when the caller
      has it (the same for every layer of an encoder call); None: computed
      here.

  Returns:
    [B, T, H] float32 ([B, Q, H] with `query_positions`).
  """

  def __init__(
      self,
      *,
      hidden_size: int,
      num_heads: int,
      initializer_range: float = 0.02,
      dropout_rate: float = 0.0,
      attention_dropout_rate: float = 0.0,
      layer_norm_epsilon: float = 1e-12,
      **kwargs,
  ):
    super().__init__(**kwargs)
    if hidden_size % num_heads:
      raise ValueError(
          f"hidden_size={hidden_size} must be divisible by "
          f"num_heads={num_heads}"
      )
    self.hidden_size = hidden_size
    self.num_heads = num_heads
    self.initializer_range = initializer_range
    self.dropout_rate = dropout_rate
    self.attention_dropout_rate = attention_dropout_rate
    self.layer_norm_epsilon = layer_norm_epsilon
    self._head_size = hidden_size // num_heads

    def dense(name):
      return tf_keras.layers.Dense(
          hidden_size,
          kernel_initializer=tf_keras.initializers.TruncatedNormal(
              stddev=initializer_range
          ),
          name=name,
      )

    self.query = dense("query")
    self.key = dense("key")
    self.value = dense("value")
    self.output_dense = dense("output_dense")
    self.attention_dropout = tf_keras.layers.Dropout(
        attention_dropout_rate, name="attention_dropout"
    )
    self.output_dropout = tf_keras.layers.Dropout(
        dropout_rate, name="output_dropout"
    )
    self.layer_norm = tf_keras.layers.LayerNormalization(
        axis=-1, epsilon=layer_norm_epsilon, dtype=tf.float32, name="layer_norm"
    )

  def _heads(self, x, layer, heads_shape):
    """[B, T, H] -> the layer's [B * T, H] product -> [B, N, T, D]."""
    y = tokenwise.dense(x, layer, shape=heads_shape)  # [B, T, N, D]
    return tf.transpose(y, [0, 2, 1, 3])

  @no_autograph
  def call(
      self,
      x,
      attention_mask,
      training=None,
      query_positions=None,
      shapes: Optional[SequenceShapes] = None,
  ):
    if shapes is None:
      shapes = sequence_shapes(x, attention_mask, self.num_heads)
    rows, row_shapes = x, shapes
    if query_positions is not None:
      rows = tf.gather(x, query_positions, batch_dims=1)  # [B, Q, H]
      row_shapes = sequence_shapes(rows, None, self.num_heads)
    # [B, T, H] -> [B, N, T, D]
    q = self._heads(rows, self.query, row_shapes.heads)
    k = self._heads(x, self.key, shapes.heads)
    v = self._heads(x, self.value, shapes.heads)
    key_bias = shapes.key_bias  # [B, 1, 1, S]
    if fusion.enabled() and not (training and self.attention_dropout_rate):
      # In a training step: the probabilities recomputed, not kept.
      scale = 1.0 / math.sqrt(self._head_size)
      context = fusion.attention(q, k, v, key_bias, scale)  # [B, T, N, D]
    else:
      scores = tf.einsum("bntd,bnsd->bnts", q, k)  # [B, N, T, S]
      scores = tf.cast(scores, tf.float32) / math.sqrt(self._head_size)
      scores += key_bias  # [B, 1, 1, S] broadcast
      probs = tf.nn.softmax(scores, axis=-1)
      probs = self.attention_dropout(tf.cast(probs, v.dtype), training=training)
      context = tf.einsum("bnts,bnsd->bntd", probs, v)  # [B, N, T, D]
      context = tf.transpose(context, [0, 2, 1, 3])  # [B, T, N, D]
    # [B, T, N, D] -> [B * T, H] -> W_o -> [B, T, H]
    context = tf.reshape(context, [-1, self.hidden_size])
    out = self.output_dropout(
        tokenwise.dense(context, self.output_dense, shape=row_shapes.hidden),
        training=training,
    )
    return residual_layer_norm(self.layer_norm, rows, out)

  def get_config(self):
    config = super().get_config()
    config.update(
        {
            "hidden_size": self.hidden_size,
            "num_heads": self.num_heads,
            "initializer_range": self.initializer_range,
            "dropout_rate": self.dropout_rate,
            "attention_dropout_rate": self.attention_dropout_rate,
            "layer_norm_epsilon": self.layer_norm_epsilon,
        }
    )
    return config
