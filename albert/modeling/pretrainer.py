"""`AlbertPretrainer`: the encoder, masked-LM and sentence-order heads."""

import tensorflow as tf

from official.modeling.no_autograph import no_autograph

from albert.modeling.encoder import AlbertEncoder
from albert.modeling.encoder_with_heads import EncoderWithHeads
from albert.modeling.masked_lm_head import MaskedLMHead
from albert.modeling.sentence_order_head import SentenceOrderHead


class AlbertPretrainer(EncoderWithHeads):
  """ALBERT pretraining model (paper section 3): MLM + sentence order.

  Args:
    encoder: the `AlbertEncoder` backbone; its word embeddings are tied to the
      masked-LM output layer.

  Call args:
    inputs: dict with the encoder inputs (`input_word_ids`, `input_mask`,
      `input_type_ids`, int [B, T]) and `masked_lm_positions` (int [B, P]).

  Example:

  >>> import numpy as np
  >>> from albert.modeling.config import AlbertConfig
  >>> from albert.modeling.pretrainer import AlbertPretrainer
  >>> config = AlbertConfig(vocab_size=100, embedding_size=8, hidden_size=16,
  ...                       num_layers=2, num_heads=2, intermediate_size=32)
  >>> pretrainer = AlbertPretrainer.from_config_object(config)
  >>> ids = np.array([[2, 17, 4, 3, 0]], np.int32)  # 4: [MASK]
  >>> outputs = pretrainer({"input_word_ids": ids,
  ...                       "input_mask": np.int32(ids > 0),
  ...                       "input_type_ids": np.zeros_like(ids),
  ...                       "masked_lm_positions": np.array([[2]], np.int32)})
  >>> tuple(outputs["mlm_logits"].shape)
  (1, 1, 100)
  >>> tuple(outputs["sentence_order_logits"].shape)
  (1, 2)

  Returns:
    dict with `mlm_logits` [B, P, V], `sentence_order_logits` [B, 2] and the
    encoder's `pooled_output` [B, H], all float32. The encoder's last block
    runs only at [CLS] and the masked positions, what the two heads read
    (`AlbertEncoder`'s `output_positions`; 21 of 128 rows with ALBERT's 20
    predictions), so there is no `sequence_output`: call `encoder` for it.
  """

  def __init__(
      self, encoder: AlbertEncoder, *, name: str = "albert_pretrainer", **kwargs
  ):
    super().__init__(name=name, **kwargs)
    self.encoder = encoder
    # Build the encoder first so the tied embedding table exists.
    encoder(encoder.dummy_inputs())
    config = encoder.config
    self.masked_lm = MaskedLMHead(
        embedding_table=encoder.embedding_table,
        activation=config.hidden_act,
        initializer_range=config.initializer_range,
        layer_norm_epsilon=config.layer_norm_epsilon,
        name="masked_lm",
    )
    self.sentence_order = SentenceOrderHead(
        initializer_range=config.initializer_range, name="sentence_order"
    )

  @no_autograph
  def call(self, inputs, training=None):
    outputs = self.encoder(
        inputs,
        training=training,
        output_positions=inputs["masked_lm_positions"],
    )
    mlm_logits = self.masked_lm(outputs["sequence_output"])  # [B, P, V]
    sop_logits = self.sentence_order(outputs["pooled_output"])  # [B, 2]
    return {
        "mlm_logits": mlm_logits,
        "sentence_order_logits": sop_logits,
        "pooled_output": outputs["pooled_output"],
    }

  def dummy_inputs(
      self, batch_size: int = 1, seq_length: int = 2, num_predictions: int = 1
  ):
    """All-zero inputs of the right dtypes, e.g. to build the weights."""
    inputs = self.encoder.dummy_inputs(batch_size, seq_length)
    inputs["masked_lm_positions"] = tf.zeros(
        [batch_size, num_predictions], tf.int32
    )
    return inputs
