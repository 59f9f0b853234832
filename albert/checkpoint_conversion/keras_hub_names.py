"""keras-hub's ALBERT names: the one table (keras-hub `AlbertBackbone` and
`AlbertTextClassifier`, saved by Keras 3 as `*.weights.h5`).

Keras 3 stores a model's weights by layer: `layers/<key>/vars/<i>`, where the
key is the layer's class in snake case, numbered in the order of
`model.layers` (`dense`, `dense_1`, ...), sublayers below their attribute
name, and each `vars` group carries the layer's name as an attribute. The
backbone's `TransformerEncoder`s are created group by group, inner layer by
inner layer: `transformer_encoder_{g * K + k}` is group g, inner layer k,
our weight set g * K + k. Attention kernels are per head ([H, N, H / N];
the output [N, H / N, H]), the same numbers as our [H, H]. keras-hub always
has the embedding projection (E == H: we write the identity and accept
only it, as for transformers), applies group int(l / (L / G)) (the
original's rule when G divides L; other L, G are refused), and fixes the
activation (the tanh GELU, our `gelu`) and LayerNorm epsilon (1e-12).
"""

import json
from typing import Any, Dict, List, Mapping, Tuple

import numpy as np

from albert.checkpoint_conversion.errors import ConversionError
from albert.checkpoint_conversion.name_table import NameTable
from albert.checkpoint_conversion.name_table import TensorName
from albert.modeling import weight_names as ours
from albert.modeling.config import AlbertConfig

FORMAT_NAME = "keras-hub"
BACKBONE = ("keras_hub.src.models.albert.albert_backbone", "AlbertBackbone")
CLASSIFIER = (
    "keras_hub.src.models.albert.albert_text_classifier",
    "AlbertTextClassifier",
)
PREPROCESSOR = (
    "keras_hub.src.models.albert.albert_text_classifier_preprocessor",
    "AlbertTextClassifierPreprocessor",
)
TOKENIZER = ("keras_hub.src.models.albert.albert_tokenizer", "AlbertTokenizer")
# The versions this layout was checked against (tests/testdata/keras_hub).
VERSIONS = {"keras_version": "3.15.1", "keras_hub_version": "0.32.0"}
ACTIVATIONS = ("gelu", "gelu_new")  # keras-hub's fixed tanh GELU
LAYER_NORM_EPSILON = 1e-12
VOCABULARY_ASSET = "assets/tokenizer/vocabulary.spm"
PROJECTION = (
    "layers/dense/vars/0",
    "layers/dense/vars/1",
)  # embedding_projection kernel, bias

# A TransformerEncoder's sublayers: (attribute path, layer name).
_ENCODER_SUBLAYERS = (
    ("_feedforward_dropout", "feedforward_dropout"),
    ("_feedforward_intermediate_dense", "feedforward_intermediate_dense"),
    ("_feedforward_layer_norm", "feedforward_layer_norm"),
    ("_feedforward_output_dense", "feedforward_output_dense"),
    ("_self_attention_dropout", "self_attention_dropout"),
    ("_self_attention_layer", "self_attention_layer"),
    ("_self_attention_layer/_dropout_layer", "dropout"),
    ("_self_attention_layer/_softmax", "softmax"),
    ("_self_attention_layer/key_dense", "key"),
    ("_self_attention_layer/output_dense", "attention_output"),
    ("_self_attention_layer/query_dense", "query"),
    ("_self_attention_layer/value_dense", "value"),
    ("_self_attention_layer_norm", "self_attention_layer_norm"),
)


def _block_key(index: int) -> str:
  return "transformer_encoder" + (f"_{index}" if index else "")


def backbone_groups(config: AlbertConfig) -> List[Tuple[str, str]]:
  """Every group of the backbone's weights file: (path, layer name)."""
  groups = [("vars", "albert_backbone")]
  layers = [
      ("input_layer", "token_ids"),
      ("input_layer_1", "segment_ids"),
      ("input_layer_2", "padding_mask"),
      ("reversible_embedding", "token_embedding"),
      ("position_embedding", "position_embedding"),
      ("embedding", "segment_embedding"),
      ("add", "embeddings_add"),
      ("layer_normalization", "embeddings_layer_norm"),
      ("dropout", "embeddings_dropout"),
      ("dense", "embedding_projection"),
      ("dense_1", "pooled_dense"),
  ]
  k = config.inner_group_num
  for i in range(config.num_hidden_groups * k):
    layers.append((_block_key(i), f"group_{i // k}_inner_layer_{i % k}"))
    groups += [
        (f"layers/{_block_key(i)}/{path}/vars", name)
        for path, name in _ENCODER_SUBLAYERS
    ]
  groups += [(f"layers/{key}/vars", name) for key, name in layers]
  return groups


def classifier_groups() -> List[Tuple[str, str]]:
  """Every group of an `AlbertTextClassifier`'s task weights file (the
  optimizer's state is not written: keras-hub compiles a new one)."""
  return [
      ("vars", "albert_text_classifier"),
      ("layers/dense/vars", "logits"),
      ("layers/dropout/vars", "output_dropout"),
      ("preprocessor/vars", "albert_text_classifier_preprocessor"),
      ("preprocessor/tokenizer/vars", "albert_tokenizer"),
  ]


def check_config(config: AlbertConfig, what: str) -> None:
  """Fails unless keras-hub's `AlbertBackbone` computes the model."""
  if config.sharing != "all":
    raise ConversionError(
        f"{what}: sharing={config.sharing!r}: keras-hub's AlbertBackbone "
        "shares every layer of a group (sharing='all')"
    )
  if config.num_layers % config.num_hidden_groups:
    raise ConversionError(
        f"{what}: num_layers={config.num_layers} is not divisible by "
        f"num_hidden_groups={config.num_hidden_groups}, which keras-hub's "
        "AlbertBackbone requires"
    )
  if config.hidden_act not in ACTIVATIONS or (
      config.layer_norm_epsilon != LAYER_NORM_EPSILON
  ):
    raise ConversionError(
        f"{what}: hidden_act={config.hidden_act!r}, layer_norm_epsilon="
        f"{config.layer_norm_epsilon}: keras-hub's AlbertBackbone fixes the "
        f"tanh GELU ('gelu') and {LAYER_NORM_EPSILON}"
    )


def name_table(config: AlbertConfig) -> NameTable:
  """The backbone's weights: our name <-> `layers/.../vars/i`."""
  h, n = config.hidden_size, config.num_heads
  entries = []

  def add(key, our, shape=None):
    entries.append(TensorName(f"layers/{key}", our, external_shape=shape))

  e = ours.EMBEDDINGS
  add("reversible_embedding/vars/0", f"{e}/word_embeddings")
  add("position_embedding/vars/0", f"{e}/position_embeddings")
  add("embedding/vars/0", f"{e}/type_embeddings")
  add("layer_normalization/vars/0", f"{e}/layer_norm/gamma")
  add("layer_normalization/vars/1", f"{e}/layer_norm/beta")
  if config.embedding_size != config.hidden_size:
    add("dense/vars/0", f"{e}/embedding_projection/kernel")
    add("dense/vars/1", f"{e}/embedding_projection/bias")
  for i in range(config.num_hidden_groups * config.inner_group_num):
    block = _block_key(i)
    attention = f"{block}/_self_attention_layer"
    for name in ("query", "key", "value"):
      add(
          f"{attention}/{name}_dense/vars/0",
          ours.attention_weight(i, f"{name}/kernel"),
          (h, n, h // n),
      )
      add(
          f"{attention}/{name}_dense/vars/1",
          ours.attention_weight(i, f"{name}/bias"),
          (n, h // n),
      )
    add(
        f"{attention}/output_dense/vars/0",
        ours.attention_weight(i, "output_dense/kernel"),
        (n, h // n, h),
    )
    add(
        f"{attention}/output_dense/vars/1",
        ours.attention_weight(i, "output_dense/bias"),
    )
    for j, p in enumerate(("gamma", "beta")):
      add(
          f"{block}/_self_attention_layer_norm/vars/{j}",
          ours.attention_weight(i, f"layer_norm/{p}"),
      )
      add(
          f"{block}/_feedforward_layer_norm/vars/{j}",
          ours.ffn_weight(i, f"layer_norm/{p}"),
      )
    for j, p in enumerate(("kernel", "bias")):
      add(
          f"{block}/_feedforward_intermediate_dense/vars/{j}",
          ours.ffn_weight(i, f"intermediate/{p}"),
      )
      add(
          f"{block}/_feedforward_output_dense/vars/{j}",
          ours.ffn_weight(i, f"output_dense/{p}"),
      )
  add("dense_1/vars/0", f"{ours.POOLER}/kernel")
  add("dense_1/vars/1", f"{ours.POOLER}/bias")
  return NameTable(entries, format_name=FORMAT_NAME)


def classifier_table() -> NameTable:
  """An `AlbertTextClassifier`'s head in its task weights file."""
  return NameTable(
      [
          TensorName("layers/dense/vars/0", "classifier/kernel"),
          TensorName("layers/dense/vars/1", "classifier/bias"),
      ],
      format_name=FORMAT_NAME,
  )


def projection_identity(config: AlbertConfig) -> Dict[str, np.ndarray]:
  """E == H: the identity projection keras-hub's backbone always has."""
  if config.embedding_size != config.hidden_size:
    return {}
  return {
      PROJECTION[0]: np.eye(config.hidden_size, dtype=np.float32),
      PROJECTION[1]: np.zeros([config.hidden_size], np.float32),
  }


def drop_identity_projection(
    tensors: Dict[str, np.ndarray], config: AlbertConfig, *, source: str
) -> Dict[str, np.ndarray]:
  """E == H: the projection must be the identity (none of ours computes
  another); it is dropped."""
  if config.embedding_size != config.hidden_size:
    return tensors
  tensors = dict(tensors)
  want = projection_identity(config)
  for key in PROJECTION:
    if key in tensors and not np.array_equal(tensors.pop(key), want[key]):
      raise ConversionError(
          f"{source}: embedding_dim == hidden_dim but the embedding "
          "projection is not the identity: no ALBERT of ours computes it"
      )
  return tensors


def _wrapped(kind: Tuple[str, str], config: Dict[str, Any]) -> Dict[str, Any]:
  module, name = kind
  return {
      "module": module,
      "class_name": name,
      "config": config,
      "registered_name": f"keras_hub>{name}",
  }


def _dtype(name: str) -> Dict[str, Any]:
  return {
      "module": "keras",
      "class_name": "DTypePolicy",
      "config": {"name": name},
      "registered_name": None,
  }


def backbone_config(config: AlbertConfig) -> Dict[str, Any]:
  """config.json of the backbone (`keras.saving.serialize_keras_object`)."""
  return _wrapped(
      BACKBONE,
      {
          "name": "albert_backbone",
          "trainable": True,
          "dtype": _dtype("float32"),
          "vocabulary_size": config.vocab_size,
          "num_layers": config.num_layers,
          "num_heads": config.num_heads,
          "num_groups": config.num_hidden_groups,
          "num_inner_repetitions": config.inner_group_num,
          "embedding_dim": config.embedding_size,
          "hidden_dim": config.hidden_size,
          "intermediate_dim": config.intermediate_size,
          "dropout": config.dropout_rate,
          "max_sequence_length": config.max_position_embeddings,
          "num_segments": config.type_vocab_size,
      },
  )


def tokenizer_config() -> Dict[str, Any]:
  """tokenizer.json: an `AlbertTokenizer` of VOCABULARY_ASSET."""
  return _wrapped(
      TOKENIZER,
      {
          "name": "albert_tokenizer",
          "trainable": True,
          "dtype": _dtype("int32"),
          "config_file": "tokenizer.json",
          "proto": None,
          "sequence_length": None,
          "add_bos": False,
          "add_eos": False,
      },
  )


def preprocessor_config(seq_length: int) -> Dict[str, Any]:
  """preprocessor.json of an `AlbertTextClassifier`."""
  return _wrapped(
      PREPROCESSOR,
      {
          "name": "albert_text_classifier_preprocessor",
          "trainable": True,
          "dtype": _dtype("float32"),
          "tokenizer": tokenizer_config(),
          "config_file": "preprocessor.json",
          "sequence_length": seq_length,
          "truncate": "round_robin",
      },
  )


def classifier_config(
    config: AlbertConfig, num_classes: int, dropout: float, preprocessor
) -> Dict[str, Any]:
  """task.json of an `AlbertTextClassifier` (logits out)."""
  return _wrapped(
      CLASSIFIER,
      {
          "backbone": backbone_config(config),
          "preprocessor": preprocessor,
          "name": "albert_text_classifier",
          "num_classes": num_classes,
          "activation": "linear",
          "dropout": dropout,
      },
  )


def config_from_keras_hub(data: Mapping[str, Any], *, source: str):
  """Our config from a config.json of keras-hub's `AlbertBackbone`."""
  if data.get("class_name") != BACKBONE[1]:
    raise ConversionError(
        f"{source}: class_name={data.get('class_name')!r}, not "
        f"{BACKBONE[1]}: not a keras-hub ALBERT preset"
    )
  c = data.get("config", {})
  try:
    return AlbertConfig.explicit(
        vocab_size=c["vocabulary_size"],
        embedding_size=c["embedding_dim"],
        hidden_size=c["hidden_dim"],
        num_layers=c["num_layers"],
        num_heads=c["num_heads"],
        intermediate_size=c["intermediate_dim"],
        num_hidden_groups=c.get("num_groups", 1),
        inner_group_num=c.get("num_inner_repetitions", 1),
        dropout_rate=c.get("dropout", 0.0),
        attention_dropout_rate=c.get("dropout", 0.0),
        max_position_embeddings=c.get("max_sequence_length", 512),
        type_vocab_size=c.get("num_segments", 2),
    )
  except (KeyError, TypeError, ValueError) as e:
    raise ConversionError(
        f"{source}: {json.dumps(c)[:200]} is not an AlbertBackbone config we "
        f"can read ({e})"
    ) from e
