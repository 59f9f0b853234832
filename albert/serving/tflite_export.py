"""TFLite flatbuffers of the encoder and of fine-tuned classifiers.

Token ids in (tokenisation stays outside: TF-Text's SentencePiece op has no
TFLite kernel), a fixed `seq_length`, batch dimension free. Two precisions:
`float32`, and `dynamic_int8` (TFLite's dynamic-range quantisation: int8
weights, float activations; `tf.lite.Optimize.DEFAULT` without a
representative dataset).

The model is saved as a SavedModel with one `serving_default` signature
and converted with `tf.lite.TFLiteConverter.from_saved_model`, so the
flatbuffer has a signature runner named `serving_default` taking
`input_word_ids`, `input_mask`, `input_type_ids`.
"""

import os
import tempfile
from typing import Callable, Dict

import tensorflow as tf

from albert.modeling import pooling

from official.io import atomic_write
from official.io import files
from official.core import export_base

PRECISIONS = ("float32", "dynamic_int8")
_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


class _Signature(export_base.ExportModule):
  """One function of the three inputs, as the converter's SavedModel."""

  def __init__(self, model, outputs: Callable, seq_length: int):
    super().__init__(model, name="tflite_export")
    spec = tf.TensorSpec([None, seq_length], tf.int32)
    self._outputs = outputs
    self.serve = tf.function(
        self._serve,
        input_signature=[
            tf.TensorSpec(spec.shape, tf.int32, name=n) for n in _INPUTS
        ],
        autograph=False,
    )

  def _serve(self, input_word_ids, input_mask, input_type_ids):
    inputs = {
        "input_word_ids": input_word_ids,
        "input_mask": input_mask,
        "input_type_ids": input_type_ids,
    }
    return self._outputs(self.model, inputs)


def encoder_outputs(encoder, inputs) -> Dict[str, tf.Tensor]:
  outputs = encoder(inputs, training=False)
  return {
      "pooled_output": outputs["pooled_output"],
      "sequence_output": outputs["sequence_output"],
  }


def embedding_outputs(settings: Dict) -> Callable:
  """`encoder_outputs` plus `embedding` [B, H], pooled and normalised as an
  embedding model's settings (`model_dir.read_embedding`) say."""

  def outputs(encoder, inputs) -> Dict[str, tf.Tensor]:
    out = encoder_outputs(encoder, inputs)
    out["embedding"] = pooling.pool(
        out["sequence_output"],
        inputs["input_mask"],
        settings["pooling"],
        settings["normalize"],
    )
    return out

  return outputs


def classifier_outputs(classifier, inputs) -> Dict[str, tf.Tensor]:
  """Class logits and probabilities: [B, K] (or [B, T, K] per token)."""
  logits = classifier(inputs, training=False)["logits"]
  return {"logits": logits, "probabilities": tf.nn.softmax(logits, -1)}


def regression_outputs(regressor, inputs) -> Dict[str, tf.Tensor]:
  """The regression score [B]."""
  return {"score": regressor(inputs, training=False)["logits"][:, 0]}


# Heads whose models take packed [B, T] inputs (what a TFLite model takes).
_PACKED_INPUT_HEADS = ("sequence_classification", "token_classification")


def finetuned_outputs(task, model) -> Callable:
  """The outputs function of a fine-tuned model on packed [B, T] inputs:
  sentence classification or regression (GLUE, own data), token
  classification, and a trained embedder (its encoder's outputs and the
  pooled `embedding`). SQuAD and RACE models take other inputs and return
  spans or per-choice scores: ValueError."""
  settings = task.embedding_settings()
  if settings is not None:
    pooled = embedding_outputs(settings)
    return lambda embedder, inputs: pooled(embedder.encoder, inputs)
  if getattr(model, "head_kind", None) not in _PACKED_INPUT_HEADS:
    raise ValueError(
        f"{type(task).__name__} is not a classification, regression or "
        "token classification task: TFLite export covers those; serve "
        "this one as a SavedModel (python -m albert.run_finetuning "
        "--mode=export)"
    )
  if getattr(task, "is_regression", False):
    return regression_outputs
  return classifier_outputs


def convert(
    model, outputs: Callable, *, seq_length: int, precision: str
) -> bytes:
  """The TFLite flatbuffer of `outputs(model, inputs)`."""
  if precision not in PRECISIONS:
    raise ValueError(f"precision={precision!r} is not one of {PRECISIONS}")
  module = _Signature(model, outputs, seq_length)
  # local-only: the converter's scratch SavedModel, removed after.
  with tempfile.TemporaryDirectory() as tmp:
    tf.saved_model.save(
        module, tmp, signatures={"serving_default": module.serve}
    )
    converter = tf.lite.TFLiteConverter.from_saved_model(tmp)
    if precision == "dynamic_int8":
      converter.optimizations = [tf.lite.Optimize.DEFAULT]
    return converter.convert()


def write(path: str, flatbuffer: bytes) -> None:
  """Writes the flatbuffer atomically (the directory must exist)."""
  directory = os.path.dirname(path) or "."
  if not files.isdir(directory):
    raise ValueError(f"directory {directory} does not exist")
  atomic_write.write_atomic(path, flatbuffer)
