"""`SentenceOrderHead`: the 2-way sentence-order (SOP) classifier."""

import tensorflow as tf
import tf_keras

from official.modeling.no_autograph import no_autograph


class SentenceOrderHead(tf_keras.layers.Layer):
  """Logits for "segments in order" (0) vs "swapped" (1) from the pooled output.

  Paper section 3.1 (inter-sentence coherence loss). The same head serves NSP
  when the data is built with random next sentences.

  Args:
    initializer_range: stddev of the truncated-normal initialiser.

  Call args:
    pooled_output: [B, H].

  Returns:
    [B, 2] float32 logits.
  """

  def __init__(self, *, initializer_range: float = 0.02, **kwargs):
    super().__init__(**kwargs)
    self.initializer_range = initializer_range
    self.dense = tf_keras.layers.Dense(
        2,
        kernel_initializer=tf_keras.initializers.TruncatedNormal(
            stddev=initializer_range
        ),
        name="dense",
    )

  @no_autograph
  def call(self, pooled_output):
    return tf.cast(self.dense(pooled_output), tf.float32)  # [B, H] -> [B, 2]

  def get_config(self):
    config = super().get_config()
    config.update({"initializer_range": self.initializer_range})
    return config
