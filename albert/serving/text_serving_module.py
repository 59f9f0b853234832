"""`TextServingModule`: raw text in, ALBERT out: one SavedModel for serving."""

from typing import Any, Dict, Optional

import tensorflow as tf

from albert.modeling.pretrainer import AlbertPretrainer
from albert.serving import embedding_serving
from albert.serving.preprocessor import AlbertPreprocessor

_TEXT = tf.TensorSpec([None], tf.string)


class TextServingModule(embedding_serving.EmbeddingServingModule):
  """SentencePiece and the model in one graph; only TF and TF-Text ops.

  `xla` (needs XLA's CPU JIT where it is served; TF Serving:
  --xla_cpu_compilation_enabled): at a fixed length the encoder compiled
  with XLA, at dynamic length `EmbeddingServingModule`'s fused kernels.

  Signatures (text is string [B]; over-long input is truncated to seq_length;
  T is the batch's longest packed text, or seq_length for a preprocessor
  without `dynamic_length`):
    serving_default(text) -> pooled_output [B, H], sequence_output [B, T, H],
      input_mask [B, T].
    fill_mask(text with literal "[MASK]"s) -> for each text's masks, in order,
      padded to the most masks in the batch: top_k_ids int32 [B, M, k],
      top_k_tokens string [B, M, k] (pieces without their word mark:
      SentencePiece's "▁", WordPiece's "##"), top_k_scores float32 [B, M, k]
      (softmax probabilities), mask_positions int32 [B, M] (-1 = padding).
    sentence_order(first, second) -> in_order_probability [B] (the
      probability that `second` follows `first`), sentence_order_logits [B, 2].
    embed(text), similarity(first, second): `EmbeddingServingModule`'s,
      pooled and normalised as `embedding` says (an embedding model's
      settings, MODEL_DIR/embedding.json).
  """

  def __init__(
      self,
      pretrainer: AlbertPretrainer,
      preprocessor: AlbertPreprocessor,
      top_k: int = 5,
      xla: bool = False,
      name: str = "albert_serving",
      embedding: Optional[Dict[str, Any]] = None,
  ):
    dynamic = preprocessor.dynamic_length
    super().__init__(
        pretrainer,
        preprocessor,
        embedding,
        name=name,
        fused_kernels=xla and dynamic,
    )
    self.top_k = top_k
    # One input signature, so every signature shares one trace of the model
    # part. At lengths that vary with the request it is the embed
    # signature's (XLA would compile the whole encoder once per shape, so
    # `xla` makes only the fusions between the matrix products XLA's:
    # `EmbeddingServingModule`'s fused_kernels); `xla` at a fixed length
    # compiles it with XLA (the SentencePiece ops cannot be).
    self._encode = (
        self._encode_any_length
        if dynamic
        else embedding_serving.encoder_function(pretrainer.encoder, xla)
    )

  @tf.function(input_signature=[_TEXT], autograph=False)
  def serve(self, text):
    inputs = self.preprocessor(text)
    outputs = self._encode(inputs)
    return {
        "pooled_output": outputs["pooled_output"],
        "sequence_output": outputs["sequence_output"],
        "input_mask": inputs["input_mask"],
    }

  @tf.function(input_signature=[_TEXT], autograph=False)
  def fill_mask(self, text):
    p = self.preprocessor
    inputs = p.pack([p.tokenize_with_masks(text)])
    is_mask = tf.equal(inputs["input_word_ids"], p.mask_id)  # [B, T]
    positions = tf.ragged.boolean_mask(
        tf.broadcast_to(
            tf.range(tf.shape(is_mask)[1], dtype=tf.int32), tf.shape(is_mask)
        ),
        is_mask,
    )  # [B, (M)]
    valid = tf.ragged.boolean_mask(tf.ones_like(is_mask), is_mask).to_tensor()
    positions = positions.to_tensor(default_value=0)  # [B, M]
    encoded = self._encode(inputs)
    logits = self.model.masked_lm(encoded["sequence_output"], positions)
    scores, ids = tf.math.top_k(tf.nn.softmax(logits, axis=-1), k=self.top_k)
    keep = tf.cast(valid, tf.bool)[..., tf.newaxis]  # [B, M, 1]
    ids = tf.where(keep, ids, -1)
    tokens = p.surface(tf.maximum(ids, 0))  # without the word mark
    tokens = tf.where(keep, tokens, "")
    return {
        "top_k_ids": ids,
        "top_k_tokens": tokens,
        "top_k_scores": tf.where(keep, scores, 0.0),
        "mask_positions": tf.where(keep[..., 0], positions, -1),
    }

  @tf.function(input_signature=[_TEXT, _TEXT], autograph=False)
  def sentence_order(self, first, second):
    inputs = self.preprocessor(first, second)
    outputs = self._encode(inputs)
    logits = self.model.sentence_order(outputs["pooled_output"])
    return {
        "in_order_probability": tf.nn.softmax(logits)[:, 0],
        "sentence_order_logits": logits,
    }

  def signatures(self):
    return {
        "serving_default": self.serve,
        "fill_mask": self.fill_mask,
        "sentence_order": self.sentence_order,
        "embed": self.embed,
        "similarity": self.similarity,
    }
