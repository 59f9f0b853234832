"""`HubEncoderModule`: the hub-style encoder SavedModel.

The original's counterpart is `export_to_tfhub.py`.
"""

import functools
from typing import Optional

import tensorflow as tf

from albert import features
from albert.modeling.pretrainer import AlbertPretrainer
from official.core import export_base

_IDS = tf.TensorSpec([None, None], tf.int32)
_INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")
_INPUTS = {name: _IDS for name in _INPUT_NAMES}


class HubEncoderModule(export_base.ExportModule):
  """Serves a trained `AlbertPretrainer` on token ids.

  A Reusable SavedModel (the TF Hub convention `hub.KerasLayer(encoder,
  trainable=True)` fine-tunes): `__call__(inputs, training=False)` on the
  dict of int32 [B, T] `input_word_ids`, `input_mask`, `input_type_ids`
  returns `pooled_output` [B, H], `sequence_output` [B, T, H] and
  `encoder_outputs`, a list of every block's [B, T, H] output; `variables`,
  `trainable_variables` (the encoder's) and `regularization_losses` (none:
  ALBERT uses no weight penalty in the model) are saved with it.

  `mlm`, as TF Hub's BERT-family encoders have it, is callable the same
  way on the dict plus int32 [B, P] `masked_lm_positions` and returns those
  outputs plus `mlm_logits` [B, P, V] and `sentence_order_logits` [B, 2].

  TF2 hub-style signatures (tensorflow/models, keras-hub names):
    serving_default(input_word_ids, input_mask, input_type_ids: int32 [B, T])
      -> pooled_output [B, H], sequence_output [B, T, H], default (= pooled),
         stacked_encoder_outputs [num_blocks, B, T, H] (the list above,
         stacked: a signature returns tensors, not lists).
    mlm(... , masked_lm_positions: int32 [B, P]) -> mlm_logits [B, P, V],
         sentence_order_logits [B, 2], pooled_output, sequence_output.

  The original TF1 hub module's signatures, for code written against it
  (inputs named as in the original records: input_ids, input_mask,
  segment_ids; `features.RECORD_TO_MODEL` translates them):
    tokens(...) -> pooled_output, sequence_output.
    sop(...) -> pooled_output, sequence_output, sop_log_probs [B, 2]
      (log-softmax; index 0 = in order, 1 = swapped).
    tokenization_info() -> vocab_file (the SentencePiece model or the
      WordPiece vocab.txt, an asset of this SavedModel), do_lower_case; only
      when `tokenizer_file` is given.
  The original's `mlm` signature took `mlm_positions`; its masked-LM logits
  are served by the TF2 `mlm` signature above.
  """

  # Plain attributes in the SavedModel (tf.Module has read-only properties
  # of these names), as the Reusable SavedModel interface asks.
  variables = None
  trainable_variables = None
  regularization_losses = None

  def __init__(
      self,
      pretrainer: AlbertPretrainer,
      tokenizer_file: Optional[str] = None,
      do_lower_case: bool = True,
      name: str = "albert_encoder",
  ):
    super().__init__(pretrainer, name=name)
    self.do_lower_case = do_lower_case
    self.vocab_file = (
        tf.saved_model.Asset(tokenizer_file) if tokenizer_file else None
    )
    if self.vocab_file is not None:  # a model without a tokenizer has none
      self.tokenization_info = tf.function(
          self._tokenization_info, input_signature=[], autograph=False
      )
    encoder = pretrainer.encoder
    self.variables = list(encoder.variables)
    self.trainable_variables = list(encoder.trainable_variables)
    self.regularization_losses = []
    # Every function and signature below calls one of these two, so the
    # encoder is traced once per mode (each trace unrolls every block); they
    # are untracked, so `save` does not trace them once more.
    run = tuple(  # indexed by `training`
        tf.function(
            functools.partial(_run_encoder, encoder, training=training),
            input_signature=[_INPUTS],
            autograph=False,
        )
        for training in (False, True)
    )
    self._local = export_base.Untracked(run=run)
    self.__call__ = tf.function(self._reusable_call, autograph=False)
    self.mlm = _MaskedLm(pretrainer, run)
    for training in (False, True):
      self.__call__.get_concrete_function(_INPUTS, training=training)

  def _reusable_call(self, inputs, training=False):
    return self._local.run[bool(training)](_inputs(inputs))

  def _outputs(self, input_word_ids, input_mask, input_type_ids):
    return self._local.run[False](
        {
            "input_word_ids": input_word_ids,
            "input_mask": input_mask,
            "input_type_ids": input_type_ids,
        }
    )

  @tf.function(input_signature=[_IDS, _IDS, _IDS], autograph=False)
  def encode(self, input_word_ids, input_mask, input_type_ids):
    outputs = self._outputs(input_word_ids, input_mask, input_type_ids)
    return {
        "pooled_output": outputs["pooled_output"],
        "sequence_output": outputs["sequence_output"],
        "default": outputs["pooled_output"],
        "stacked_encoder_outputs": tf.stack(outputs["encoder_outputs"], axis=0),
    }

  @tf.function(input_signature=[_IDS, _IDS, _IDS, _IDS], autograph=False)
  def mlm_signature(
      self, input_word_ids, input_mask, input_type_ids, masked_lm_positions
  ):
    outputs = self.mlm.__call__(
        {
            "input_word_ids": input_word_ids,
            "input_mask": input_mask,
            "input_type_ids": input_type_ids,
            "masked_lm_positions": masked_lm_positions,
        }
    )
    return {
        k: outputs[k]
        for k in (
            "mlm_logits",
            "sentence_order_logits",
            "pooled_output",
            "sequence_output",
        )
    }

  def _original_inputs(self, input_ids, input_mask, segment_ids):
    named = {
        "input_ids": input_ids,
        "input_mask": input_mask,
        "segment_ids": segment_ids,
    }
    return {features.RECORD_TO_MODEL[k]: v for k, v in named.items()}

  @tf.function(input_signature=[_IDS, _IDS, _IDS], autograph=False)
  def tokens(self, input_ids, input_mask, segment_ids):
    outputs = self._outputs(
        **self._original_inputs(input_ids, input_mask, segment_ids)
    )
    return {
        "pooled_output": outputs["pooled_output"],
        "sequence_output": outputs["sequence_output"],
    }

  @tf.function(input_signature=[_IDS, _IDS, _IDS], autograph=False)
  def sop(self, input_ids, input_mask, segment_ids):
    outputs = self._outputs(
        **self._original_inputs(input_ids, input_mask, segment_ids)
    )
    logits = self.model.sentence_order(outputs["pooled_output"])  # [B, 2]
    return {
        "pooled_output": outputs["pooled_output"],
        "sequence_output": outputs["sequence_output"],
        "sop_log_probs": tf.nn.log_softmax(tf.cast(logits, tf.float32)),
    }

  def _tokenization_info(self):
    return {
        "vocab_file": self.vocab_file.asset_path,
        "do_lower_case": tf.constant(self.do_lower_case),
    }

  def signatures(self):
    signatures = {
        "serving_default": self.encode,
        "mlm": self.mlm_signature,
        "tokens": self.tokens,
        "sop": self.sop,
    }
    if self.vocab_file is not None:
      signatures["tokenization_info"] = self.tokenization_info
    return signatures


def _inputs(inputs) -> dict:
  return {name: inputs[name] for name in _INPUT_NAMES}


def _run_encoder(encoder, inputs, training) -> dict:
  return _encoder_dict(encoder(inputs, training=training))


def _encoder_dict(outputs) -> dict:
  return {
      "pooled_output": outputs["pooled_output"],
      "sequence_output": outputs["sequence_output"],
      "encoder_outputs": list(outputs["encoder_outputs"]),
  }


class _MaskedLm(export_base.ExportModule):
  """`encoder.mlm`: the encoder outputs plus the pretraining heads' logits
  at `masked_lm_positions`."""

  def __init__(self, pretrainer: AlbertPretrainer, run_encoder: tuple):
    super().__init__(pretrainer, name="mlm")
    # The parent's, indexed by `training`.
    self._local = export_base.Untracked(run=run_encoder)
    self.__call__ = tf.function(self._call, autograph=False)
    inputs = dict(_INPUTS, masked_lm_positions=_IDS)
    for training in (False, True):
      self.__call__.get_concrete_function(inputs, training=training)

  def _call(self, inputs, training=False):
    pretrainer = self.model
    outputs = self._local.run[bool(training)](_inputs(inputs))
    return {
        **outputs,
        "mlm_logits": pretrainer.masked_lm(
            outputs["sequence_output"], inputs["masked_lm_positions"]
        ),
        "sentence_order_logits": pretrainer.sentence_order(
            outputs["pooled_output"]
        ),
    }
