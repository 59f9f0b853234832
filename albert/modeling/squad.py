"""`AlbertSquadModel`: the encoder with a SQuAD span head."""

from typing import Dict

import tensorflow as tf

from official.modeling.no_autograph import no_autograph

from albert.modeling.encoder import AlbertEncoder
from albert.modeling.encoder_with_heads import EncoderWithHeads
from albert.modeling.squad_heads import ConditionalSpanHead, SpanHead

VERSIONS = ("1.1", "2.0")


class AlbertSquadModel(EncoderWithHeads):
  """Span logits for SQuAD v1.1 (`SpanHead`) or v2.0 (`ConditionalSpanHead`).

  Args:
    encoder: the `AlbertEncoder`.
    version: "1.1" or "2.0".
    dropout_rate: dropout on the v2.0 answerability hidden layer.
    start_n_top, end_n_top: the v2.0 inference beam.
    context_mask: v1.1: mask the span logits to the context and [CLS]
      (`SpanHead`; False, the default: the original's unmasked head). v2.0
      always masks, as the original's `create_v2_model`.

  Call args:
    inputs: dict of int32 [B, T] `input_word_ids`, `input_mask`,
      `input_type_ids`, `paragraph_mask`; for v2.0 training also int32 [B]
      `start_position` (the end logits are conditioned on it; without it
      the inference outputs are returned).

  Returns:
    v1.1: float32 [B, T] `start_logits`, `end_logits`.
    v2.0: `start_logits` [B, T] and `cls_logits` [B]; training: `end_logits`
      [B, T]; inference: the beam (`ConditionalSpanHead`).
  """

  def __init__(
      self,
      encoder: AlbertEncoder,
      *,
      version: str = "1.1",
      dropout_rate: float = 0.1,
      start_n_top: int = 5,
      end_n_top: int = 5,
      context_mask: bool = False,
      name: str = "albert_squad",
      **kwargs,
  ):
    super().__init__(name=name, **kwargs)
    if version not in VERSIONS:
      raise ValueError(f"version={version!r} must be one of {VERSIONS}")
    self.encoder = encoder
    self.version = version
    self.dropout_rate = dropout_rate
    self.start_n_top = start_n_top
    self.end_n_top = end_n_top
    self.context_mask = context_mask
    c = encoder.config
    if version == "1.1":
      self.span_head = SpanHead(
          initializer_range=c.initializer_range,
          mask_context=context_mask,
          name="span_head",
      )
    else:
      self.span_head = ConditionalSpanHead(
          hidden_size=c.hidden_size,
          initializer_range=c.initializer_range,
          dropout_rate=dropout_rate,
          layer_norm_epsilon=c.layer_norm_epsilon,
          start_n_top=start_n_top,
          end_n_top=end_n_top,
          name="span_head",
      )

  @property
  def head_kind(self) -> str:
    return "squad_v1" if self.version == "1.1" else "squad_v2"

  def dummy_inputs(self) -> Dict[str, tf.Tensor]:
    inputs = self.encoder.dummy_inputs(
        seq_length=max(self.start_n_top, self.end_n_top)
    )
    inputs["paragraph_mask"] = tf.ones_like(inputs["input_mask"])
    return inputs

  @no_autograph
  def call(self, inputs, training=None):
    sequence = self.encoder(inputs, training=self.encoder_training(training))[
        "sequence_output"
    ]
    if self.version == "1.1":
      return self.span_head(sequence, inputs["paragraph_mask"])
    # Training conditions the end on the gold start; without one (e.g. when
    # Keras traces the training branch for a SavedModel) the beam is used.
    starts = inputs.get("start_position") if training else None
    return self.span_head(
        sequence,
        inputs["paragraph_mask"],
        start_positions=starts,
        training=training,
    )

  def head_config(self):
    return {
        "version": self.version,
        "dropout_rate": self.dropout_rate,
        "start_n_top": self.start_n_top,
        "end_n_top": self.end_n_top,
        "context_mask": self.context_mask,
    }
