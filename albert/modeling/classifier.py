"""`AlbertClassifier`: pooled output -> dropout -> one dense layer.

The head of the original `run_classifier.py` (GLUE) and, with one output,
of STS-B regression; `AlbertMultipleChoice` reuses it for RACE.
"""

from typing import Dict

import tensorflow as tf
import tf_keras

from official.modeling.no_autograph import no_autograph

from albert.modeling.encoder import AlbertEncoder
from albert.modeling.encoder_with_heads import EncoderWithHeads


class AlbertClassifier(EncoderWithHeads):
  """Class logits (or a regression score) from the encoder's pooled output.

  Subclasses classify another encoder output by setting `encoder_output`
  (`AlbertTokenClassifier`: "sequence_output", logits [B, T, num_classes]).

  Args:
    encoder: the `AlbertEncoder` (restored from a pretrained checkpoint).
    num_classes: outputs of the dense layer (1 for regression).
    dropout_rate: dropout on the pooled output during training.

  Call args:
    inputs: dict of int32 [B, T] `input_word_ids`, `input_mask`,
      `input_type_ids` (other keys, e.g. labels, are ignored).

  Returns:
    {"logits": float32 [B, num_classes]}.

  Example (the encoder of a pretrained model directory in practice:
  `albert.model_dir.load_pretrainer(DIR)[0].encoder`):

  >>> import numpy as np
  >>> from albert.modeling.classifier import AlbertClassifier
  >>> from albert.modeling.encoder import AlbertEncoder
  >>> encoder = AlbertEncoder(vocab_size=100, embedding_size=8, hidden_size=16,
  ...                         num_layers=2, num_heads=2, intermediate_size=32)
  >>> classifier = AlbertClassifier(encoder, num_classes=3)
  >>> ids = np.array([[2, 17, 31, 3]], np.int32)
  >>> logits = classifier({"input_word_ids": ids,
  ...                      "input_mask": np.ones_like(ids),
  ...                      "input_type_ids": np.zeros_like(ids)})["logits"]
  >>> tuple(logits.shape)
  (1, 3)
  """

  def __init__(
      self,
      encoder: AlbertEncoder,
      *,
      num_classes: int,
      dropout_rate: float = 0.1,
      name: str = "albert_classifier",
      **kwargs,
  ):
    super().__init__(name=name, **kwargs)
    if num_classes < 1:
      raise ValueError(f"num_classes={num_classes} must be >= 1")
    self.encoder = encoder
    self.num_classes = num_classes
    self.dropout_rate = dropout_rate
    self.dropout = tf_keras.layers.Dropout(dropout_rate, name="dropout")
    self.classifier = tf_keras.layers.Dense(
        num_classes,
        kernel_initializer=tf_keras.initializers.TruncatedNormal(
            stddev=encoder.config.initializer_range
        ),
        name="classifier",
    )

  head_kind = "sequence_classification"

  def dummy_inputs(self) -> Dict[str, tf.Tensor]:
    """All-zero inputs of the right shapes and dtypes, to build the weights."""
    return self.encoder.dummy_inputs()

  encoder_output = "pooled_output"

  def logits(self, inputs: Dict[str, tf.Tensor], training=None) -> tf.Tensor:
    """float32 [B, num_classes] logits of packed inputs ([B, T, num_classes]
    on the sequence output)."""
    kwargs = {}
    if self.encoder_output == "pooled_output":
      # Only [CLS] is read: the last block computes nothing else.
      kwargs["output_positions"] = tf.zeros(
          [tf.shape(inputs["input_word_ids"])[0], 0], tf.int32
      )
    outputs = self.encoder(
        inputs, training=self.encoder_training(training), **kwargs
    )
    features = outputs[self.encoder_output]
    features = self.dropout(features, training=training)
    return tf.cast(self.classifier(features), tf.float32)

  @no_autograph
  def call(self, inputs, training=None):
    return {"logits": self.logits(inputs, training=training)}

  def head_config(self):
    return {"num_classes": self.num_classes, "dropout_rate": self.dropout_rate}
