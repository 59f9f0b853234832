"""`AlbertTokenClassifier`: per-token tag logits (CoNLL-style tagging)."""

from albert.modeling.classifier import AlbertClassifier


class AlbertTokenClassifier(AlbertClassifier):
  """Per-token tag logits: `AlbertClassifier`'s dropout and dense layer on
  the encoder's sequence output.

  Returns:
    {"logits": float32 [B, T, num_classes]}.
  """

  encoder_output = "sequence_output"
  head_kind = "token_classification"

  def __init__(self, encoder, *, name="albert_token_classifier", **kwargs):
    super().__init__(encoder, name=name, **kwargs)
