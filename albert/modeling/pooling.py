"""`SentencePooling`: one vector per text from the encoder's token vectors.

The modes are sentence-transformers' `Pooling` module's (its
`pooling_mode_*_tokens` settings), computed as it computes them, so that an
imported embedding model gives its vectors:

  mean           the mean of the unpadded token vectors (the mask's count
                 floored at 1e-9)
  cls            the first token's vector
  max            the element-wise max over unpadded tokens (padding set to
                 -1e9 first)
  mean_sqrt_len  the sum of the unpadded token vectors over sqrt(count)

`normalize` divides by the L2 norm floored at 1e-12, as its `Normalize`
module (torch's `F.normalize`) does.
"""

import tensorflow as tf
import tf_keras
from official.modeling.no_autograph import no_autograph

MODES = ("mean", "cls", "max", "mean_sqrt_len")


def pool(sequence_output, input_mask, mode: str = "mean", normalize=False):
  """[B, T, H] token vectors, [B, T] mask -> [B, H] float32 (MODES); the
  function behind `SentencePooling`, for graphs that hold no Keras layer
  (the serving SavedModel)."""
  x = tf.cast(sequence_output, tf.float32)
  mask = tf.cast(input_mask, tf.float32)[:, :, tf.newaxis]  # [B, T, 1]
  if mode == "cls":
    pooled = x[:, 0]
  elif mode == "max":
    pooled = tf.reduce_max(tf.where(mask > 0, x, -1e9), axis=1)
  else:
    summed = tf.reduce_sum(x * mask, axis=1)  # [B, H]
    count = tf.maximum(tf.reduce_sum(mask, axis=1), 1e-9)  # [B, 1]
    pooled = summed / (count if mode == "mean" else tf.sqrt(count))
  if normalize:
    norm = tf.norm(pooled, axis=-1, keepdims=True)
    pooled = pooled / tf.maximum(norm, 1e-12)
  return pooled


class SentencePooling(tf_keras.layers.Layer):
  """Pools [B, T, H] token vectors into [B, H] text vectors.

  Args:
    mode: one of MODES.
    normalize: scale each vector to unit L2 norm.

  Call args:
    sequence_output: [B, T, H] token vectors.
    input_mask: [B, T], 1 for tokens, 0 for padding.

  Returns:
    [B, H] float32.

  Example:

  >>> import numpy as np
  >>> pool = SentencePooling(mode="mean")
  >>> tokens = np.array([[[1.0, 2.0], [3.0, 4.0], [9.0, 9.0]]], "float32")
  >>> pool(tokens, np.array([[1, 1, 0]])).numpy()
  array([[2., 3.]], dtype=float32)
  """

  def __init__(self, *, mode: str = "mean", normalize: bool = False, **kwargs):
    super().__init__(**kwargs)
    if mode not in MODES:
      raise ValueError(f"pooling mode {mode!r} is not one of {MODES}")
    self.mode = mode
    self.normalize = normalize

  @no_autograph
  def call(self, sequence_output, input_mask):
    return pool(sequence_output, input_mask, self.mode, self.normalize)

  def get_config(self):
    config = super().get_config()
    config.update({"mode": self.mode, "normalize": self.normalize})
    return config
