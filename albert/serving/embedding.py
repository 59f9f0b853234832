"""`Embedder`: texts -> one vector each, as the model directory's embedding
settings (embedding.json: pooling, normalisation, maximum length,
lower-casing) say; sentence-transformers' `encode` of the same model gives
the same vectors.

Texts are packed as `[CLS] pieces [SEP]`, cut to the maximum length (never
an error), batched in order of length and padded to the longest text of
each batch, not to a fixed length. An empty text gets the vector of its two
special tokens; an empty list gives an empty [0, H] array.
"""

from typing import List, Optional, Sequence

import numpy as np
import tensorflow as tf

from albert import model_dir as model_dir_lib
from albert.modeling.pooling import SentencePooling
from albert.text import tokenizers


class Embedder:
  """Embeds texts with an encoder and its tokenizer.

  Args:
    encoder: an `AlbertEncoder`.
    tokenizer: its tokenizer (`albert.text.tokenizers`).
    pooling, normalize: `SentencePooling`'s mode and normalisation.
    max_seq_length: tokens per text, [CLS] and [SEP] included (None: the
      encoder's position table).
  """

  def __init__(
      self,
      encoder,
      tokenizer,
      *,
      pooling: str = "mean",
      normalize: bool = False,
      max_seq_length: Optional[int] = None,
  ):
    self.encoder = encoder
    self.tokenizer = tokenizer
    self.pool = SentencePooling(mode=pooling, normalize=normalize)
    limit = encoder.config.max_position_embeddings
    self.max_seq_length = min(max_seq_length or limit, limit)
    self.dim = encoder.config.hidden_size
    self._call = tf.function(self._vectors, reduce_retracing=True)

  @classmethod
  def from_model_dir(
      cls, model_dir: str, checkpoint: Optional[str] = None
  ) -> "Embedder":
    """The embedder a model directory describes: its encoder, tokenizer
    file and embedding.json (defaults: mean pooling, no normalisation)."""
    pretrainer, _ = model_dir_lib.load_pretrainer(model_dir, checkpoint)
    settings = model_dir_lib.read_embedding(model_dir) or dict(
        model_dir_lib.EMBEDDING_DEFAULTS
    )
    spm, vocab = model_dir_lib.tokenizer_files(model_dir)
    tokenizer = tokenizers.load(spm, vocab, lower=settings["do_lower_case"])
    return cls(
        pretrainer.encoder,
        tokenizer,
        pooling=settings["pooling"],
        normalize=settings["normalize"],
        max_seq_length=settings["max_seq_length"],
    )

  def token_ids(self, text: str) -> List[int]:
    """[CLS] pieces [SEP], cut to `max_seq_length`."""
    pieces = self.tokenizer.tokenize(text)[: self.max_seq_length - 2]
    return [self.tokenizer.cls_id] + pieces + [self.tokenizer.sep_id]

  def _vectors(self, ids, mask):
    outputs = self.encoder(
        {
            "input_word_ids": ids,
            "input_mask": mask,
            "input_type_ids": tf.zeros_like(ids),
        }
    )
    return self.pool(outputs["sequence_output"], mask)

  def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
    """[len(texts), H] float32, in the order of `texts`."""
    ids = [self.token_ids(t) for t in texts]
    out = np.zeros((len(ids), self.dim), np.float32)
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    for start in range(0, len(order), batch_size):
      chosen = order[start : start + batch_size]
      width = max(len(ids[i]) for i in chosen)
      batch = np.zeros((len(chosen), width), np.int32)
      for row, i in enumerate(chosen):
        batch[row, : len(ids[i])] = ids[i]
      mask = (
          np.arange(width)[None, :]
          < np.array([len(ids[i]) for i in chosen])[:, None]
      ).astype(np.int32)
      out[chosen] = self._call(tf.constant(batch), tf.constant(mask)).numpy()
    return out
