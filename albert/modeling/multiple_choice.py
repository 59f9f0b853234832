"""`AlbertMultipleChoice`: one score per option, softmax over the options.

RACE in the original `run_race.py`: each (article, question + option) pair
is encoded on its own, its pooled output scored by one dense unit, and the
scores of an example's options compared with a softmax.
"""

import tensorflow as tf

from official.modeling.no_autograph import no_autograph

from albert.modeling.classifier import AlbertClassifier

_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


class AlbertMultipleChoice(AlbertClassifier):
  """Option logits from [B, K, T] inputs (K options per example).

  Args: as `AlbertClassifier`, with one output per option.

  Call args:
    inputs: dict of int32 [B, K, T] `input_word_ids`, `input_mask`,
      `input_type_ids`.

  Returns:
    {"logits": float32 [B, K]}.
  """

  head_kind = "multiple_choice"

  def __init__(
      self,
      encoder,
      *,
      num_classes: int = 1,
      dropout_rate: float = 0.1,
      name: str = "albert_multiple_choice",
      **kwargs,
  ):
    if num_classes != 1:
      raise ValueError(
          f"num_classes={num_classes}: a multiple-choice model "
          "scores each option with one output"
      )
    super().__init__(
        encoder, num_classes=1, dropout_rate=dropout_rate, name=name, **kwargs
    )

  def dummy_inputs(self):
    return {k: v[:, tf.newaxis] for k, v in self.encoder.dummy_inputs().items()}

  @no_autograph
  def call(self, inputs, training=None):
    shape = tf.shape(inputs["input_word_ids"])  # [B, K, T]
    flat = {
        k: tf.reshape(inputs[k], [-1, shape[-1]])  # -> [B*K, T]
        for k in _INPUTS
    }
    scores = self.logits(flat, training=training)  # [B*K, 1]
    return {"logits": tf.reshape(scores, shape[:2])}  # [B, K]
