"""`EncoderModule`: the hub-style encoder SavedModel (REFERENCE section 7)."""

import tensorflow as tf

from albert.pretrainer import AlbertPretrainer

_IDS = tf.TensorSpec([None, None], tf.int32)


class EncoderModule(tf.Module):
  """Serves a trained `AlbertPretrainer` on token ids.

  Signatures:
    serving_default(input_word_ids, input_mask, input_type_ids: int32 [B, T])
      -> pooled_output [B, H], sequence_output [B, T, H], default (= pooled),
         encoder_outputs [num_blocks, B, T, H] (every block's output, stacked
         because a signature returns tensors, not lists).
    mlm(... , masked_lm_positions: int32 [B, P]) -> mlm_logits [B, P, V],
         sentence_order_logits [B, 2], pooled_output, sequence_output.
  """

  def __init__(self, pretrainer: AlbertPretrainer, name: str = "albert_encoder"):
    super().__init__(name=name)
    self.pretrainer = pretrainer
    self.encoder = pretrainer.encoder

  @tf.function(input_signature=[_IDS, _IDS, _IDS])
  def encode(self, input_word_ids, input_mask, input_type_ids):
    outputs = self.encoder({"input_word_ids": input_word_ids,
                            "input_mask": input_mask,
                            "input_type_ids": input_type_ids}, training=False)
    return {
        "pooled_output": outputs["pooled_output"],
        "sequence_output": outputs["sequence_output"],
        "default": outputs["pooled_output"],
        "encoder_outputs": tf.stack(outputs["encoder_outputs"], axis=0),
    }

  @tf.function(input_signature=[_IDS, _IDS, _IDS, _IDS])
  def mlm(self, input_word_ids, input_mask, input_type_ids, masked_lm_positions):
    outputs = self.pretrainer({"input_word_ids": input_word_ids,
                               "input_mask": input_mask,
                               "input_type_ids": input_type_ids,
                               "masked_lm_positions": masked_lm_positions},
                              training=False)
    return {k: outputs[k] for k in ("mlm_logits", "sentence_order_logits",
                                    "pooled_output", "sequence_output")}

  def signatures(self):
    return {"serving_default": self.encode, "mlm": self.mlm}
