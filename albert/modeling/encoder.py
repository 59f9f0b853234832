"""`AlbertEncoder`: the ALBERT backbone (embeddings, shared layers, pooler)."""

from typing import Dict

import tensorflow as tf
import tf_keras

from official.modeling.no_autograph import no_autograph

from albert.modeling.config import AlbertConfig
from albert.modeling.embedding import FactorizedEmbedding
from albert.modeling.shared_transformer_block import SharedTransformerBlock


class AlbertEncoder(tf_keras.Model):
  """ALBERT backbone: FactorizedEmbedding -> SharedTransformerBlock -> pooler.

  Keyword arguments are exactly the fields of `AlbertConfig` (and validated by
  it); `AlbertEncoder.from_config_object(config)` builds from a config.

  Example (a tiny encoder; `gin/base.gin`'s sizes are the defaults):

  >>> import numpy as np
  >>> from albert.modeling.encoder import AlbertEncoder
  >>> encoder = AlbertEncoder(vocab_size=100, embedding_size=8, hidden_size=16,
  ...                         num_layers=2, num_heads=2, intermediate_size=32)
  >>> ids = np.array([[2, 17, 31, 3, 0]], np.int32)  # [CLS] .. [SEP] <pad>
  >>> outputs = encoder({"input_word_ids": ids,
  ...                    "input_mask": np.int32(ids > 0),
  ...                    "input_type_ids": np.zeros_like(ids)})
  >>> tuple(outputs["sequence_output"].shape)
  (1, 5, 16)
  >>> tuple(outputs["pooled_output"].shape)
  (1, 16)

  Call args:
    inputs: dict of int32 [B, T] tensors `input_word_ids`, `input_mask`
      (1 = real token, 0 = padding) and `input_type_ids`.
    output_positions: optional int [B, N] (N may be 0): the only positions
      whose last-layer output is wanted. The last block then computes its
      queries, attention output and feed-forward layer at [CLS] and these
      positions only (keys and values still at every token): the same
      values, without the work on the other T - N - 1 rows (about a
      twelfth of ALBERT-base's step for a classifier, which reads [CLS]
      alone). The Model Garden's encoders call this `output_range`.

  Returns:
    dict with
      `sequence_output`: [B, T, H] float32, the last layer's output ([B, N, H]
        at `output_positions` when given);
      `pooled_output`: [B, H] float32, dense + tanh on token 0 ([CLS]);
      `encoder_outputs`: list of L * K tensors [B, T, H], every block's output
        (left out when `output_positions` is given).
  """

  def __init__(self, *, name: str = "albert_encoder", **config_kwargs):
    keras_kwargs = {
        k: config_kwargs.pop(k)
        for k in ("dtype", "trainable")
        if k in config_kwargs
    }
    super().__init__(name=name, **keras_kwargs)
    self.config = AlbertConfig.explicit(**config_kwargs)
    c = self.config
    self.embeddings = FactorizedEmbedding(
        vocab_size=c.vocab_size,
        embedding_size=c.embedding_size,
        hidden_size=c.hidden_size,
        max_position_embeddings=c.max_position_embeddings,
        type_vocab_size=c.type_vocab_size,
        initializer_range=c.initializer_range,
        dropout_rate=c.dropout_rate,
        layer_norm_epsilon=c.layer_norm_epsilon,
        name="embeddings",
    )
    self.transformer = SharedTransformerBlock(
        num_layers=c.num_layers,
        hidden_size=c.hidden_size,
        num_heads=c.num_heads,
        intermediate_size=c.intermediate_size,
        num_hidden_groups=c.num_hidden_groups,
        inner_group_num=c.inner_group_num,
        sharing=c.sharing,
        hidden_act=c.hidden_act,
        initializer_range=c.initializer_range,
        dropout_rate=c.dropout_rate,
        attention_dropout_rate=c.attention_dropout_rate,
        layer_norm_epsilon=c.layer_norm_epsilon,
        name="transformer",
    )
    self.pooler = tf_keras.layers.Dense(
        c.hidden_size,
        activation="tanh",
        kernel_initializer=tf_keras.initializers.TruncatedNormal(
            stddev=c.initializer_range
        ),
        name="pooler",
    )

  @classmethod
  def from_config_object(
      cls, config: AlbertConfig, **kwargs
  ) -> "AlbertEncoder":
    """Builds the encoder described by an `AlbertConfig`."""
    return cls(**config.to_dict(), **kwargs)

  @property
  def embedding_table(self) -> tf.Variable:
    """The [V, E] word-embedding matrix (tied to the masked-LM output)."""
    return self.embeddings.word_embeddings

  def dummy_inputs(
      self, batch_size: int = 1, seq_length: int = 2
  ) -> Dict[str, tf.Tensor]:
    """All-zero inputs of the right dtypes, e.g. to build the weights."""
    zeros = tf.zeros([batch_size, seq_length], tf.int32)
    return {
        "input_word_ids": zeros,
        "input_mask": tf.ones_like(zeros),
        "input_type_ids": zeros,
    }

  @no_autograph
  def call(self, inputs, training=None, output_positions=None):
    word_ids = tf.cast(inputs["input_word_ids"], tf.int32)
    mask = tf.cast(inputs["input_mask"], tf.int32)
    type_ids = tf.cast(inputs["input_type_ids"], tf.int32)
    x = self.embeddings(word_ids, type_ids, training=training)  # [B, T, H]
    queries = None
    if output_positions is not None:
      positions = tf.cast(output_positions, tf.int32)  # [B, N]
      first = tf.zeros([tf.shape(positions)[0], 1], tf.int32)
      queries = tf.concat([first, positions], axis=1)  # [B, 1 + N]
    encoder_outputs = self.transformer(
        x, mask, training=training, query_positions=queries
    )
    last = encoder_outputs[-1]  # [B, T, H] (or [B, 1 + N, H])
    pooled_output = tf.cast(
        self.pooler(last[:, 0, :]), tf.float32
    )  # [B, H] -> [B, H]
    if queries is not None:
      return {"sequence_output": last[:, 1:], "pooled_output": pooled_output}
    return {
        "sequence_output": last,
        "pooled_output": pooled_output,
        "encoder_outputs": encoder_outputs,
    }

  def get_config(self):
    return {"name": self.name, **self.config.to_dict()}

  @classmethod
  def from_config(cls, config, custom_objects=None):
    del custom_objects
    return cls(**config)
