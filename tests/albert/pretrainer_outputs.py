"""The four pretrainer outputs the conversion tests compare, as numpy arrays."""

import tensorflow as tf

OUTPUT_NAMES = (
    "sequence_output",
    "pooled_output",
    "mlm_logits",
    "sentence_order_logits",
)


def pretrainer_outputs(pretrainer, word_ids, mask, type_ids, positions):
  """[sequence_output, pooled_output, mlm_logits, sentence_order_logits];
  the sequence output from the encoder (the pretrainer's last block runs
  only at [CLS] and the masked positions)."""
  inputs = {
      "input_word_ids": tf.constant(word_ids, tf.int32),
      "input_mask": tf.constant(mask, tf.int32),
      "input_type_ids": tf.constant(type_ids, tf.int32),
      "masked_lm_positions": tf.constant(positions, tf.int32),
  }
  out = dict(pretrainer(inputs))
  out["sequence_output"] = pretrainer.encoder(inputs)["sequence_output"]
  return [out[k].numpy() for k in OUTPUT_NAMES]
