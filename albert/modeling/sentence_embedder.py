"""`AlbertSentenceEmbedder`: an `AlbertEncoder` and `SentencePooling`.

The model of an embedding model: one vector per text, pooled from the token
vectors (`albert/modeling/pooling.py`). Fine-tuning an embedder
(`albert/finetuning/own_data/sentence_embedding.py`) feeds it the texts of
each training row under a prefix per role (`anchor_input_word_ids`, ...);
the roles share one encoder call, as sentence-transformers embeds every
column of a batch with the same weights.
"""

from typing import Dict

import tensorflow as tf

from official.modeling.no_autograph import no_autograph

from albert.modeling.encoder_with_heads import EncoderWithHeads
from albert.modeling.pooling import SentencePooling

# The roles of the texts of one training row, in the order their vectors
# are computed: a query, the text that answers it, and a hard negative.
ROLES = ("anchor", "positive", "negative")
_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


class AlbertSentenceEmbedder(EncoderWithHeads):
  """Texts' token ids in, one pooled (optionally unit-length) vector out.

  Args:
    encoder: the `AlbertEncoder`.
    pooling: `SentencePooling` mode (mean, cls, max, mean_sqrt_len).
    normalize: scale each vector to unit L2 norm.

  Call args:
    inputs: int32 [B, T] `input_word_ids`, `input_mask` (and optionally
      `input_type_ids`) -> {"embedding": float32 [B, H]}; or the same three
      under each role's prefix of ROLES present (`anchor_input_word_ids`,
      ...) -> {role: float32 [B, H]}, computed in one encoder call.

  Example (the encoder of a pretrained model directory in practice:
  `albert.model_dir.load_pretrainer(DIR)[0].encoder`):

  >>> import numpy as np
  >>> from albert.modeling.encoder import AlbertEncoder
  >>> encoder = AlbertEncoder(vocab_size=100, embedding_size=8, hidden_size=16,
  ...                         num_layers=2, num_heads=2, intermediate_size=32)
  >>> embedder = AlbertSentenceEmbedder(encoder, normalize=True)
  >>> ids = np.array([[2, 17, 31, 3], [2, 40, 3, 0]], np.int32)
  >>> mask = (ids > 0).astype(np.int32)
  >>> vectors = embedder({"input_word_ids": ids, "input_mask": mask})
  >>> norms = np.linalg.norm(vectors["embedding"], axis=-1)
  >>> tuple(vectors["embedding"].shape), bool(np.allclose(norms, 1))
  ((2, 16), True)
  """

  def __init__(
      self,
      encoder,
      *,
      pooling: str = "mean",
      normalize: bool = False,
      name: str = "albert_sentence_embedder",
      **kwargs,
  ):
    super().__init__(name=name, **kwargs)
    self.encoder = encoder
    self.pooling = SentencePooling(mode=pooling, normalize=normalize)

  def dummy_inputs(self) -> Dict[str, tf.Tensor]:
    return self.encoder.dummy_inputs()

  def head_config(self):
    return {"pooling": self.pooling.mode, "normalize": self.pooling.normalize}

  def embed(self, inputs, training=None) -> tf.Tensor:
    """float32 [B, H] of packed inputs (`input_type_ids` default 0)."""
    ids = inputs["input_word_ids"]
    outputs = self.encoder(
        {
            "input_word_ids": ids,
            "input_mask": inputs["input_mask"],
            "input_type_ids": inputs.get("input_type_ids", tf.zeros_like(ids)),
        },
        training=training,
    )
    return self.pooling(outputs["sequence_output"], inputs["input_mask"])

  @no_autograph
  def call(self, inputs, training=None):
    if "input_word_ids" in inputs:
      return {"embedding": self.embed(inputs, training)}
    roles = [r for r in ROLES if f"{r}_input_word_ids" in inputs]
    if not roles:
      raise ValueError(
          "AlbertSentenceEmbedder needs input_word_ids, or the inputs of "
          f"one of the roles {ROLES} (anchor_input_word_ids, ...)"
      )
    joined = {
        name: tf.concat(
            [
                inputs.get(
                    f"{r}_{name}",
                    tf.zeros_like(inputs[f"{r}_input_word_ids"]),
                )
                for r in roles
            ],
            axis=0,
        )
        for name in _INPUTS
    }
    vectors = tf.split(self.embed(joined, training), len(roles), axis=0)
    return dict(zip(roles, vectors))
