"""`TextServingModule`: raw text in, ALBERT out: one SavedModel for serving."""

from typing import Any, Dict, Optional

import tensorflow as tf

from albert import model_dir as model_dir_lib
from albert.modeling import pooling
from albert.serving.preprocessor import AlbertPreprocessor
from albert.modeling.pretrainer import AlbertPretrainer
from official.core import export_base

_TEXT = tf.TensorSpec([None], tf.string)
_IDS = tf.TensorSpec([None, None], tf.int32)
_INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")


class TextServingModule(export_base.ExportModule):
  """SentencePiece and the model in one graph; only TF and TF-Text ops.

  Signatures (text is string [B]; over-long input is truncated to seq_length):
    serving_default(text) -> pooled_output [B, H], sequence_output [B, T, H],
      input_mask [B, T].
    fill_mask(text with literal "[MASK]"s) -> for each text's masks, in order,
      padded to the most masks in the batch: top_k_ids int32 [B, M, k],
      top_k_tokens string [B, M, k] (pieces without their word mark:
      SentencePiece's "▁", WordPiece's "##"), top_k_scores float32 [B, M, k]
      (softmax probabilities), mask_positions int32 [B, M] (-1 = padding).
    sentence_order(first, second) -> in_order_probability [B] (the
      probability that `second` follows `first`), sentence_order_logits [B, 2].
    embed(text) -> embedding [B, H] (pooled and normalised as `embedding`
      says: an embedding model's settings, MODEL_DIR/embedding.json),
      num_tokens int32 [B] ([CLS] and [SEP] included), truncated bool [B]
      (the text was cut at the maximum length). Texts are padded to the
      longest of the batch, not to seq_length; none is ever an error.
    similarity(first, second) -> cosine [B] of the two texts' embeddings.
  """

  def __init__(
      self,
      pretrainer: AlbertPretrainer,
      preprocessor: AlbertPreprocessor,
      top_k: int = 5,
      jit_compile: bool = True,
      name: str = "albert_serving",
      embedding: Optional[Dict[str, Any]] = None,
  ):
    super().__init__(pretrainer, name=name)
    self.preprocessor = preprocessor
    self.top_k = top_k
    settings = {**model_dir_lib.EMBEDDING_DEFAULTS, **(embedding or {})}
    self.pooling = str(settings["pooling"])
    self.normalize = bool(settings["normalize"])
    limit = pretrainer.encoder.config.max_position_embeddings
    self.embed_length = min(settings["max_seq_length"] or limit, limit)

    def encode(xla: bool):
      return tf.function(
          lambda inputs: pretrainer.encoder(
              {name: inputs[name] for name in _INPUT_NAMES}, training=False
          ),
          input_signature=[{name: _IDS for name in _INPUT_NAMES}],
          jit_compile=xla,
          autograph=False,
      )

    # Lengths vary with each batch: no XLA here (it compiles per shape).
    self._encode_any_length = encode(False)
    # The model part is compiled with XLA (the SentencePiece ops cannot be);
    # one input signature, so every signature shares one trace of it.
    self._encode = encode(jit_compile)

  @tf.function(input_signature=[_TEXT])
  def serve(self, text):
    inputs = self.preprocessor(text)
    outputs = self._encode(inputs)
    return {
        "pooled_output": outputs["pooled_output"],
        "sequence_output": outputs["sequence_output"],
        "input_mask": inputs["input_mask"],
    }

  @tf.function(input_signature=[_TEXT])
  def fill_mask(self, text):
    p = self.preprocessor
    inputs = p.pack([p.tokenize_with_masks(text)])
    is_mask = tf.equal(inputs["input_word_ids"], p.mask_id)  # [B, T]
    positions = tf.ragged.boolean_mask(
        tf.broadcast_to(
            tf.range(p.seq_length, dtype=tf.int32), tf.shape(is_mask)
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

  @tf.function(input_signature=[_TEXT, _TEXT])
  def sentence_order(self, first, second):
    inputs = self.preprocessor(first, second)
    outputs = self._encode(inputs)
    logits = self.model.sentence_order(outputs["pooled_output"])
    return {
        "in_order_probability": tf.nn.softmax(logits)[:, 0],
        "sentence_order_logits": logits,
    }

  def _embed(self, text):
    tokens = self.preprocessor.tokenize(text)  # [B, (n)]
    room = self.embed_length - 2
    lengths = tf.minimum(tokens.row_lengths(), room)
    # The longest text of the batch (2: an empty batch's).
    zero = tf.zeros([1], lengths.dtype)
    longest = tf.cast(
        tf.reduce_max(tf.concat([lengths, zero], 0)) + 2, tf.int32
    )
    inputs = self.preprocessor.pack([tokens], seq_length=longest)
    outputs = self._encode_any_length(inputs)
    embedding = pooling.pool(
        outputs["sequence_output"],
        inputs["input_mask"],
        self.pooling,
        self.normalize,
    )
    return {
        "embedding": embedding,
        "num_tokens": tf.cast(lengths + 2, tf.int32),
        "truncated": tokens.row_lengths() > room,
    }

  @tf.function(input_signature=[_TEXT])
  def embed(self, text):
    return self._embed(text)

  @tf.function(input_signature=[_TEXT, _TEXT])
  def similarity(self, first, second):
    self.preprocessor.check_same_batch(first=first, second=second)
    # One encoder call for both batches (padded to the longest of both).
    both = self._embed(tf.concat([first, second], axis=0))["embedding"]
    a, b = tf.split(tf.math.l2_normalize(both, axis=-1), 2, axis=0)
    return {"cosine": tf.reduce_sum(a * b, axis=-1)}

  def signatures(self):
    return {
        "serving_default": self.serve,
        "fill_mask": self.fill_mask,
        "sentence_order": self.sentence_order,
        "embed": self.embed,
        "similarity": self.similarity,
    }
