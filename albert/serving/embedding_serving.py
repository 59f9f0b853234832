"""`EmbeddingServingModule`: texts in, one vector each out, in a SavedModel.

The serving form of an embedding model: a trained sentence embedder's export
(`albert/finetuning/own_data/sentence_embedding.py`) and, through
`TextServingModule`, every raw-text SavedModel of a pretrained or imported
model. Texts are padded to the longest of each batch (not to a fixed
length), so the encoder's matrix products run on TensorFlow's kernels, not
XLA's, which would compile the whole encoder once per shape.
"""

from typing import Any, Dict, Optional

import tensorflow as tf

from albert import model_dir as model_dir_lib
from albert.modeling import pooling
from albert.serving.preprocessor import AlbertPreprocessor
from official.core import export_base
from official.modeling import fusion

_TEXT = tf.TensorSpec([None], tf.string)
_IDS = tf.TensorSpec([None, None], tf.int32)
INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")


def encoder_function(encoder, jit_compile: bool, fused: bool = False):
  """A tf.function of `encoder` on the three int32 [B, T] inputs, of any
  B and T (one trace, shared by every signature that calls it); `fused`
  traces the encoder with `official.modeling.fusion`'s kernels."""

  def call(inputs):
    with fusion.scope(fused):
      return encoder(
          {name: inputs[name] for name in INPUT_NAMES}, training=False
      )

  return tf.function(
      call,
      input_signature=[{name: _IDS for name in INPUT_NAMES}],
      jit_compile=jit_compile,
      autograph=False,
  )


class EmbeddingServingModule(export_base.ExportModule):
  """Sentence embeddings from raw text; only TF and TF-Text ops.

  Args:
    model: a Keras model with an `encoder` (`AlbertSentenceEmbedder`,
      `AlbertPretrainer`).
    preprocessor: its in-graph tokenizer.
    embedding: the embedding settings (`model_dir.EMBEDDING_DEFAULTS`'s
      keys: pooling, normalize, max_seq_length; lower-casing is the
      preprocessor's).
    fused_kernels: run the encoder's GELU, residual LayerNorms and
      attention softmax as XLA fusions (`official.modeling.fusion`), the
      matrix products staying TensorFlow's: 1.6x the texts/s in bfloat16,
      1.15x in float32 (docs/performance.md "Sentence embeddings"). XLA
      compiles them per batch shape, on first use, so the SavedModel needs
      XLA's CPU JIT (TF Serving: --xla_cpu_compilation_enabled). Off (the
      default): plain TensorFlow kernels, which every server runs.

  Signatures (text is string [B]):
    embed(text) -> embedding float32 [B, H] (pooled and normalised as the
      settings say), num_tokens int32 [B] ([CLS] and [SEP] included),
      truncated bool [B] (the text was cut at the maximum length). A text
      longer than the maximum is cut, never an error; an empty text gets
      the vector of its two special tokens; an empty batch gives [0, H].
    similarity(first, second) -> cosine float32 [B] of the two texts'
      embeddings.
    serving_default: embed (this module's own export only).
  """

  def __init__(
      self,
      model,
      preprocessor: AlbertPreprocessor,
      embedding: Optional[Dict[str, Any]] = None,
      name: str = "embedding_serving",
      fused_kernels: bool = False,
  ):
    super().__init__(model, name=name)
    self.preprocessor = preprocessor
    settings = {**model_dir_lib.EMBEDDING_DEFAULTS, **(embedding or {})}
    self.pooling = str(settings["pooling"])
    self.normalize = bool(settings["normalize"])
    limit = model.encoder.config.max_position_embeddings
    self.embed_length = min(settings["max_seq_length"] or limit, limit)
    # Lengths vary with each batch: the matrix products stay TensorFlow's
    # (XLA would compile the whole encoder per shape).
    self._encode_any_length = encoder_function(
        model.encoder, False, fused=fused_kernels
    )

  def _embed(self, text):
    tokens = self.preprocessor.tokenize(text)  # [B, (n)]
    room = self.embed_length - 2
    lengths = tf.minimum(tokens.row_lengths(), room)
    longest = self.preprocessor.longest(lengths + 2)  # [CLS] ... [SEP]
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

  @tf.function(input_signature=[_TEXT], autograph=False)
  def embed(self, text):
    return self._embed(text)

  @tf.function(input_signature=[_TEXT, _TEXT], autograph=False)
  def similarity(self, first, second):
    first, second = self.preprocessor.check_same_batch(
        first=first, second=second
    )
    # One encoder call for both batches (padded to the longest of both).
    both = self._embed(tf.concat([first, second], axis=0))["embedding"]
    a, b = tf.split(tf.math.l2_normalize(both, axis=-1), 2, axis=0)
    return {"cosine": tf.reduce_sum(a * b, axis=-1)}

  def signatures(self):
    return {
        "serving_default": self.embed,
        "embed": self.embed,
        "similarity": self.similarity,
    }
