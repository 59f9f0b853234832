"""Fine-tuned models: our name of every weight, and the original TF1 and
transformers names of their heads.

A fine-tuned model is the encoder (named as in `pretrainer_weights`) plus
one head, by kind:

  sequence_classification  AlbertClassifier on the pooled output (GLUE,
                           own-data classification; one output: regression)
  multiple_choice          AlbertMultipleChoice (RACE): one logit per option
  token_classification     AlbertTokenClassifier on the sequence output
  squad_v1                 SquadModel v1.1: one [H, 2] dense layer
  squad_v2                 SquadModel v2.0: the XLNet-style conditional head

Original TF1 names (docs/reference.md section 3; `classifier_utils.py`
`create_model`, `race_utils.py` `create_model`, `squad_utils.py`
`create_v1_model` / `create_v2_model`): `output_weights` [K, H] (stored
[out, in]) and `output_bias` at the root for the classifiers (the original
has no token task; its token heads take the same layout), `cls/squad/
output_weights` [2, H] for v1.1 and the `start_logits/`, `end_logits/`,
`answer_class/` dense layers ([in, out]) for v2.0. transformers names
(`AlbertForSequenceClassification`, `AlbertForMultipleChoice`,
`AlbertForTokenClassification`: `classifier`; `AlbertForQuestionAnswering`:
`qa_outputs`, start then end); transformers has no v2.0 head.
"""

import dataclasses
from typing import Dict, List, Optional, Tuple

import tensorflow as tf

from albert.checkpoint_conversion.errors import ConversionError
from albert.checkpoint_conversion.name_table import TensorName
from albert.modeling.weight_names import check_complete
from albert.modeling.weight_names import encoder_weights

KINDS = (
    "sequence_classification",
    "multiple_choice",
    "token_classification",
    "squad_v1",
    "squad_v2",
)

_CLASSIFIER = "classifier"
_SPAN = "span_head"
# v2.0: (original scope/name, our layer attribute/name); kernels [in, out]
# on both sides.
_V2 = (
    ("start_logits/dense/kernel", "start_dense/kernel"),
    ("start_logits/dense/bias", "start_dense/bias"),
    ("end_logits/dense_0/kernel", "end_dense_0/kernel"),
    ("end_logits/dense_0/bias", "end_dense_0/bias"),
    ("end_logits/LayerNorm/gamma", "end_layer_norm/gamma"),
    ("end_logits/LayerNorm/beta", "end_layer_norm/beta"),
    ("end_logits/dense_1/kernel", "end_dense_1/kernel"),
    ("end_logits/dense_1/bias", "end_dense_1/bias"),
    ("answer_class/dense_0/kernel", "answer_dense_0/kernel"),
    ("answer_class/dense_0/bias", "answer_dense_0/bias"),
    ("answer_class/dense_1/kernel", "answer_dense_1/kernel"),
)


@dataclasses.dataclass(frozen=True)
class HuggingFaceHead:
  """A transformers class for a head kind and how its head is named."""

  architecture: str
  prefix: str  # the head Linear: `classifier` or `qa_outputs`
  pooler: bool  # whether the class has `albert.pooler`


HUGGINGFACE = {
    "sequence_classification": HuggingFaceHead(
        "AlbertForSequenceClassification", "classifier", True
    ),
    "multiple_choice": HuggingFaceHead(
        "AlbertForMultipleChoice", "classifier", True
    ),
    "token_classification": HuggingFaceHead(
        "AlbertForTokenClassification", "classifier", False
    ),
    "squad_v1": HuggingFaceHead(
        "AlbertForQuestionAnswering", "qa_outputs", False
    ),
}


def head_kind(model) -> str:
  """The head kind of a fine-tuned model (one of `KINDS`)."""
  kind = getattr(model, "head_kind", None)
  if kind not in KINDS:
    raise ValueError(f"{type(model).__name__} is not a fine-tuned ALBERT model")
  return kind


def _dense(prefix: str, layer, bias: bool = True) -> Dict[str, tf.Variable]:
  weights = {f"{prefix}/kernel": layer.kernel}
  if bias:
    weights[f"{prefix}/bias"] = layer.bias
  return weights


def finetuned_weights(model) -> Dict[str, tf.Variable]:
  """Every variable of a built fine-tuned model, by our name."""
  weights = encoder_weights(model.encoder)
  kind = head_kind(model)
  if kind == "squad_v1":
    weights.update(_dense(f"{_SPAN}/dense", model.span_head.dense))
  elif kind == "squad_v2":
    head = model.span_head
    for _, ours in _V2:
      layer, name = ours.split("/")
      weights[f"{_SPAN}/{ours}"] = getattr(getattr(head, layer), name)
  else:
    weights.update(_dense(_CLASSIFIER, model.classifier))
  check_complete(
      model, weights, "albert/checkpoint_conversion/finetuned_names.py"
  )
  return weights


def original_head(kind: str) -> List[TensorName]:
  """The original TF1 names of a head kind's weights."""
  if kind == "squad_v1":
    return [
        TensorName("cls/squad/output_weights", f"{_SPAN}/dense/kernel", True),
        TensorName("cls/squad/output_bias", f"{_SPAN}/dense/bias"),
    ]
  if kind == "squad_v2":
    return [TensorName(theirs, f"{_SPAN}/{ours}") for theirs, ours in _V2]
  return [
      TensorName("output_weights", f"{_CLASSIFIER}/kernel", True),
      TensorName("output_bias", f"{_CLASSIFIER}/bias"),
  ]


def huggingface_head(kind: str, what: str) -> Tuple[HuggingFaceHead, list]:
  """(the transformers class, the names of its head) of a head kind.

  Raises:
    ConversionError: transformers has no class for the kind (SQuAD v2.0).
  """
  head = HUGGINGFACE.get(kind)
  if head is None:
    raise ConversionError(
        f"{what}: transformers has no ALBERT class for the {kind} head (the "
        "original's XLNet-style SQuAD v2.0 head); convert it to the original "
        "TF1 format instead"
    )
  ours = f"{_SPAN}/dense" if kind == "squad_v1" else _CLASSIFIER
  return head, [
      TensorName(f"{head.prefix}.weight", f"{ours}/kernel", True),
      TensorName(f"{head.prefix}.bias", f"{ours}/bias"),
  ]


def kind_of_architecture(architectures: Optional[List[str]]) -> Optional[str]:
  """The head kind of a transformers `config.json` `architectures` list."""
  for kind, head in HUGGINGFACE.items():
    if architectures and head.architecture in architectures:
      return kind
  return None
