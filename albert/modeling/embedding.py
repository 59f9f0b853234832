"""`FactorizedEmbedding`: ALBERT's V x E token embedding followed by E -> H."""

import tensorflow as tf
import tf_keras

from official.modeling import tokenwise
from official.modeling.no_autograph import no_autograph


class FactorizedEmbedding(tf_keras.layers.Layer):
  """Word + position + token-type embeddings of width E, then a projection to H.

  Paper section 3.1: one-hot vectors are first projected into a small embedding
  space of size E and then into the hidden space of size H, so the embedding
  parameters are V * E + E * H instead of V * H. When E == H there is no
  projection (`embedding_projection` is None), as in the original
  `modeling.transformer_model` (its `embedding_hidden_mapping_in` exists only
  when the widths differ).

  Args:
    vocab_size: V.
    embedding_size: E.
    hidden_size: H.
    max_position_embeddings: rows of the position table; longest sequence.
    type_vocab_size: rows of the token-type (segment) table.
    initializer_range: stddev of the truncated-normal initialiser.
    dropout_rate: dropout after the embedding LayerNorm.
    layer_norm_epsilon: LayerNorm epsilon.

  Call args:
    input_word_ids: int [B, T] token ids.
    input_type_ids: int [B, T] segment ids.

  Returns:
    [B, T, H] embeddings in the layer's compute dtype.
  """

  def __init__(
      self,
      *,
      vocab_size: int,
      embedding_size: int,
      hidden_size: int,
      max_position_embeddings: int = 512,
      type_vocab_size: int = 2,
      initializer_range: float = 0.02,
      dropout_rate: float = 0.0,
      layer_norm_epsilon: float = 1e-12,
      **kwargs,
  ):
    super().__init__(**kwargs)
    self.vocab_size = vocab_size
    self.embedding_size = embedding_size
    self.hidden_size = hidden_size
    self.max_position_embeddings = max_position_embeddings
    self.type_vocab_size = type_vocab_size
    self.initializer_range = initializer_range
    self.dropout_rate = dropout_rate
    self.layer_norm_epsilon = layer_norm_epsilon
    # LayerNorm runs in float32 under mixed precision.
    self.layer_norm = tf_keras.layers.LayerNormalization(
        axis=-1, epsilon=layer_norm_epsilon, dtype=tf.float32, name="layer_norm"
    )
    self.dropout = tf_keras.layers.Dropout(dropout_rate, name="dropout")
    self.embedding_projection = None
    if embedding_size != hidden_size:
      self.embedding_projection = tf_keras.layers.Dense(
          hidden_size,
          kernel_initializer=tf_keras.initializers.TruncatedNormal(
              stddev=initializer_range
          ),
          name="embedding_projection",
      )

  def build(self, input_shape=None):
    def table(name, rows):
      return self.add_weight(
          name=name,
          shape=[rows, self.embedding_size],
          initializer=tf_keras.initializers.TruncatedNormal(
              stddev=self.initializer_range
          ),
          dtype=self.variable_dtype,
          # Plain float32 reads: lookups and sums stay in full precision.
          experimental_autocast=False,
      )

    self.word_embeddings = table("word_embeddings", self.vocab_size)
    self.position_embeddings = table(
        "position_embeddings", self.max_position_embeddings
    )
    self.type_embeddings = table("type_embeddings", self.type_vocab_size)
    super().build(input_shape)

  @no_autograph
  def call(self, input_word_ids, input_type_ids, training=None):
    seq_length = input_word_ids.shape[1]
    if seq_length is not None and seq_length > self.max_position_embeddings:
      raise ValueError(
          f"sequence length {seq_length} exceeds max_position_embeddings="
          f"{self.max_position_embeddings}"
      )
    dynamic_length = tf.shape(input_word_ids)[1]
    check = tf.debugging.assert_less_equal(
        dynamic_length,
        self.max_position_embeddings,
        message=f"sequence length exceeds max_position_embeddings="
        f"{self.max_position_embeddings}",
    )
    # In a graph the sum below must wait for the check (None when eager),
    # or an over-long input fails first on an unexplained broadcast.
    with tf.control_dependencies([check] if check is not None else []):
      dynamic_length = tf.identity(dynamic_length)
    # The tables are not autocast: lookups and the sum stay in float32.
    words = tf.gather(
        self.word_embeddings, input_word_ids
    )  # [B, T] -> [B, T, E]
    types = tf.gather(
        self.type_embeddings, input_type_ids
    )  # [B, T] -> [B, T, E]
    positions = self.position_embeddings[:dynamic_length]  # [T, E]
    x = words + types + positions[tf.newaxis]
    x = self.layer_norm(x)
    x = self.dropout(x, training=training)
    if self.embedding_projection is None:  # E == H
      return tf.cast(x, self.compute_dtype)
    # [B, T, E] -> [B, T, H]
    return tokenwise.dense(x, self.embedding_projection)

  def get_config(self):
    config = super().get_config()
    config.update(
        {
            "vocab_size": self.vocab_size,
            "embedding_size": self.embedding_size,
            "hidden_size": self.hidden_size,
            "max_position_embeddings": self.max_position_embeddings,
            "type_vocab_size": self.type_vocab_size,
            "initializer_range": self.initializer_range,
            "dropout_rate": self.dropout_rate,
            "layer_norm_epsilon": self.layer_norm_epsilon,
        }
    )
    return config
