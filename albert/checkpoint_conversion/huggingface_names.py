"""Hugging Face transformers ALBERT names: the one table (transformers
`modeling_albert.py`, `load_tf_weights_in_albert`).

Weights of `AlbertForPreTraining` are named `albert.embeddings.*`,
`albert.encoder.albert_layer_groups.{g}.albert_layers.{k}.*`, `albert.pooler`,
`predictions.*` and `sop_classifier.classifier`; group g, inner layer k is our
weight set g * K + k. A torch Linear `weight` is [out, in], the transpose of
our Keras kernel. `config.json` keys and activation names are translated here
too, and nowhere else.

State dicts may also hold tensors that are not weights of their own:
`predictions.decoder.{weight,bias}` are tied to the word embeddings and to
`predictions.bias` (`save_pretrained` leaves them out; `torch.save` of a state
dict keeps them), and old files carry the `position_ids` / `token_type_ids`
buffers. `split_aliases` checks and drops them; we never write them.
"""

from typing import Any, Dict, List, Mapping

from absl import logging
import numpy as np

from albert.modeling import weight_names as ours
from albert.checkpoint_conversion.errors import ConversionError
from albert.checkpoint_conversion.name_table import NameTable
from albert.checkpoint_conversion.name_table import TensorName
from albert.modeling.config import AlbertConfig
from albert.modeling.shared_transformer_block import group_of_layer

FORMAT_NAME = "Hugging Face"
MODEL_TYPE = "albert"
ARCHITECTURE = "AlbertForPreTraining"

# config.json key -> (AlbertConfig field, transformers' default when absent).
CONFIG_NAMES = {
    "vocab_size": ("vocab_size", 30000),
    "embedding_size": ("embedding_size", 128),
    "hidden_size": ("hidden_size", 4096),
    "num_hidden_layers": ("num_layers", 12),
    "num_hidden_groups": ("num_hidden_groups", 1),
    "num_attention_heads": ("num_heads", 64),
    "intermediate_size": ("intermediate_size", 16384),
    "inner_group_num": ("inner_group_num", 1),
    "hidden_act": ("hidden_act", "gelu_new"),
    "hidden_dropout_prob": ("dropout_rate", 0.0),
    "attention_probs_dropout_prob": ("attention_dropout_rate", 0.0),
    "max_position_embeddings": ("max_position_embeddings", 512),
    "type_vocab_size": ("type_vocab_size", 2),
    "initializer_range": ("initializer_range", 0.02),
    "layer_norm_eps": ("layer_norm_epsilon", 1e-12),
}
# Keys that must have this value when present (anything else is another model).
_REQUIRED_VALUES = {
    "model_type": MODEL_TYPE,
    "tie_word_embeddings": True,
    "position_embedding_type": "absolute",
}
# transformers activation name -> ours. `gelu_new` is the tanh approximation,
# our (and the original's) `gelu`; transformers' `gelu` is the exact one.
_ACTIVATIONS_IN = {
    "gelu_new": "gelu",
    "gelu_pytorch_tanh": "gelu",
    "gelu": "gelu_exact",
    "relu": "relu",
    "tanh": "tanh",
    "silu": "swish",
    "swish": "swish",
}
_ACTIVATIONS_OUT = {
    "gelu": "gelu_new",
    "gelu_new": "gelu_new",
    "gelu_exact": "gelu",
    "relu": "relu",
    "tanh": "tanh",
    "swish": "silu",
}

WORD_EMBEDDINGS = "albert.embeddings.word_embeddings.weight"
MLM_BIAS = "predictions.bias"
# Alias -> the weight it is tied to (must be equal).
TIED_ALIASES = {
    "predictions.decoder.weight": WORD_EMBEDDINGS,
    "predictions.decoder.bias": MLM_BIAS,
}
POSITION_IDS = "albert.embeddings.position_ids"
TOKEN_TYPE_IDS = "albert.embeddings.token_type_ids"

_EMBEDDINGS = {
    WORD_EMBEDDINGS: f"{ours.EMBEDDINGS}/word_embeddings",
    "albert.embeddings.position_embeddings.weight": (
        f"{ours.EMBEDDINGS}/position_embeddings"
    ),
    "albert.embeddings.token_type_embeddings.weight": (
        f"{ours.EMBEDDINGS}/type_embeddings"
    ),
}
# Linear layers (weight transposed) and LayerNorms: HF prefix -> our prefix.
PROJECTION = "albert.encoder.embedding_hidden_mapping_in"
_LINEAR = {
    PROJECTION: (f"{ours.EMBEDDINGS}/embedding_projection"),
    "albert.pooler": ours.POOLER,
    "predictions.dense": f"{ours.MASKED_LM}/dense",
    "sop_classifier.classifier": ours.SENTENCE_ORDER,
}
_LAYER_NORM = {
    "albert.embeddings.LayerNorm": f"{ours.EMBEDDINGS}/layer_norm",
    "predictions.LayerNorm": f"{ours.MASKED_LM}/layer_norm",
}
# Inside albert_layers.{k}: Linear / LayerNorm -> (attention or FFN, ours).
_BLOCK_LINEAR = {
    "attention.query": ("attention", "query"),
    "attention.key": ("attention", "key"),
    "attention.value": ("attention", "value"),
    "attention.dense": ("attention", "output_dense"),
    "ffn": ("ffn", "intermediate"),
    "ffn_output": ("ffn", "output_dense"),
}
_BLOCK_LAYER_NORM = {
    "attention.LayerNorm": ("attention", "layer_norm"),
    "full_layer_layer_norm": ("ffn", "layer_norm"),
}
_BLOCK_WEIGHT = {"attention": ours.attention_weight, "ffn": ours.ffn_weight}


def _linear(hf: str, our: str) -> List[TensorName]:
  return [
      TensorName(f"{hf}.weight", f"{our}/kernel", transpose=True),
      TensorName(f"{hf}.bias", f"{our}/bias"),
  ]


def _layer_norm(hf: str, our: str) -> List[TensorName]:
  return [
      TensorName(f"{hf}.weight", f"{our}/gamma"),
      TensorName(f"{hf}.bias", f"{our}/beta"),
  ]


def name_table(config: AlbertConfig) -> NameTable:
  """The transformers name of every weight of the pretrainer of `config`."""
  entries = [TensorName(k, v) for k, v in _EMBEDDINGS.items()]
  for hf, our in _LAYER_NORM.items():
    entries += _layer_norm(hf, our)
  for hf, our in _LINEAR.items():
    if hf == PROJECTION and config.embedding_size == config.hidden_size:
      continue  # ours has none: `projection_identity` stands in for it
    entries += _linear(hf, our)
  entries.append(TensorName(MLM_BIAS, f"{ours.MASKED_LM}/output_bias"))
  inner_num = config.inner_group_num
  for group in range(config.num_hidden_groups):
    for inner in range(inner_num):
      index = group * inner_num + inner
      prefix = (
          f"albert.encoder.albert_layer_groups.{group}."
          f"albert_layers.{inner}."
      )
      for hf, (part, name) in _BLOCK_LINEAR.items():
        entries += _linear(prefix + hf, _BLOCK_WEIGHT[part](index, name))
      for hf, (part, name) in _BLOCK_LAYER_NORM.items():
        entries += _layer_norm(prefix + hf, _BLOCK_WEIGHT[part](index, name))
  return NameTable(entries, format_name=FORMAT_NAME)


def with_model_prefix(tensors: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
  """A bare `AlbertModel`'s weights (`embeddings.*`, `encoder.*`, `pooler.*`:
  a sentence-transformers model's) under the `albert.` prefix the task
  classes use; others unchanged."""
  if any(name.startswith("albert.") for name in tensors):
    return tensors
  return {f"albert.{name}": value for name, value in tensors.items()}


def split_aliases(
    tensors: Dict[str, np.ndarray], *, source: str
) -> Dict[str, np.ndarray]:
  """The weights of a state dict without its tied aliases and buffers.

  Raises:
    ConversionError: an alias differs from the weight it should be tied to
      (an untied model we cannot hold), or a buffer is not the default.
  """
  weights = dict(tensors)
  for alias, target in TIED_ALIASES.items():
    if alias not in weights:
      continue
    value = weights.pop(alias)
    if target not in weights:  # only the alias was saved: it is the weight
      weights[target] = value
      logging.info("%s: %s read as %s", source, alias, target)
      continue
    if not np.array_equal(value, weights[target]):
      raise ConversionError(
          f"{source}: {alias} differs from {target}; only models whose "
          "output layer is tied to them (tie_word_embeddings) are supported"
      )
    logging.info("%s: %s is tied to %s; dropped", source, alias, target)
  for buffer in (POSITION_IDS, TOKEN_TYPE_IDS):
    if buffer not in weights:
      continue
    value = np.asarray(weights.pop(buffer))
    length = value.shape[-1] if value.ndim else 0
    want = np.arange(length) if buffer == POSITION_IDS else np.zeros(length)
    if value.ndim not in (1, 2) or not (value == want).all():
      raise ConversionError(
          f"{source}: buffer {buffer} is not the default "
          "(0, 1, 2, ... or all zeros); not supported"
      )
    logging.info(
        "%s: buffer %s dropped (rebuilt by transformers)", source, buffer
    )
  return weights


# Heads that transformers models other than AlbertForPreTraining leave out
# (AlbertForMaskedLM has no sentence-order head, and no pooler in
# transformers 5); a conversion keeps them freshly initialised.
OPTIONAL_HEADS = ("albert.pooler", "sop_classifier.classifier")
MLM_PREFIX = "predictions."  # AlbertForPreTraining's masked-LM head


def absent_heads(tensors: Mapping[str, Any]) -> List[str]:
  """The OPTIONAL_HEADS of which `tensors` hold neither weight nor bias."""
  return [
      head
      for head in OPTIONAL_HEADS
      if f"{head}.weight" not in tensors and f"{head}.bias" not in tensors
  ]


def head_names(heads: List[str]) -> List[str]:
  """Every tensor name of the given heads."""
  return [f"{head}.{p}" for head in heads for p in ("weight", "bias")]


def check_group_rule(config: AlbertConfig, *, what: str) -> None:
  """Refuses (L, G) for which transformers groups layers otherwise.

  The original (and this package) runs layer l with group int(l / L * G);
  transformers computes int(l / (L / G)), which rounds differently for a few
  pairs (e.g. L=18, G=14, l=9), so the same weights would compute something
  else there.
  """
  layers, groups = config.num_layers, config.num_hidden_groups
  for layer in range(layers):
    here = group_of_layer(layer, layers, groups)
    there = int(layer / (layers / groups))  # transformers' expression
    if here != there:
      raise ConversionError(
          f"{what}: num_layers={layers} with num_hidden_groups={groups}: "
          f"transformers runs layer {layer} with group {there}, the original "
          f"rule int(l / L * G) with group {here}; the converted model would "
          "compute something else, so it is not converted"
      )


def config_from_huggingface(
    data: Mapping[str, Any], *, source: str
) -> AlbertConfig:
  """An `AlbertConfig` from transformers' `config.json` contents."""
  for key, value in _REQUIRED_VALUES.items():
    if key in data and data[key] != value:
      raise ConversionError(
          f"{source}: {key}={data[key]!r} is not supported "
          f"(only {value!r}): not an ALBERT model we can "
          "convert"
      )
  if "model_type" not in data:
    raise ConversionError(
        f"{source}: no model_type; expected model_type={MODEL_TYPE!r}"
    )
  fields = {
      f: data.get(key, default) for key, (f, default) in CONFIG_NAMES.items()
  }
  act = fields["hidden_act"]
  if act not in _ACTIVATIONS_IN:
    raise ConversionError(
        f"{source}: hidden_act={act!r} is not supported "
        f"(one of {sorted(_ACTIVATIONS_IN)})"
    )
  fields["hidden_act"] = _ACTIVATIONS_IN[act]
  ignored = sorted(set(data) - set(CONFIG_NAMES) - set(_REQUIRED_VALUES))
  if ignored:
    logging.info(
        "%s: keys without a counterpart, ignored: %s",
        source,
        ", ".join(ignored),
    )
  try:
    config = AlbertConfig(sharing="all", **fields)
  except (TypeError, ValueError) as e:
    raise ConversionError(f"{source}: {e}") from e
  check_group_rule(config, what=source)
  return config


def config_to_huggingface(config: AlbertConfig, *, what: str) -> Dict[str, Any]:
  """transformers' `config.json` contents for the model of `config`."""
  if config.sharing != "all":
    raise ConversionError(
        f"{what}: sharing={config.sharing!r} has no transformers layout "
        "(it shares everything: sharing='all')"
    )
  if config.hidden_act not in _ACTIVATIONS_OUT:
    raise ConversionError(
        f"{what}: hidden_act={config.hidden_act!r} has no "
        "transformers counterpart"
    )
  check_group_rule(config, what=what)
  fields = config.to_dict()
  data: Dict[str, Any] = {
      "architectures": [ARCHITECTURE],
      "model_type": MODEL_TYPE,
      "tie_word_embeddings": True,
  }
  data.update({key: fields[f] for key, (f, _) in CONFIG_NAMES.items()})
  data["hidden_act"] = _ACTIVATIONS_OUT[config.hidden_act]
  return data


def drop_identity_projection(
    tensors: Dict[str, np.ndarray], config: AlbertConfig, *, source: str
) -> Dict[str, np.ndarray]:
  """transformers always has `embedding_hidden_mapping_in`; ours (as the
  original) has none when E == H. It is dropped when it is the identity
  (what `projection_identity` writes), else refused: no E == H model of
  ours computes it."""
  if config.embedding_size != config.hidden_size:
    return tensors
  weight = tensors.get(f"{PROJECTION}.weight")
  bias = tensors.get(f"{PROJECTION}.bias")
  if weight is None and bias is None:
    return tensors
  identity = np.eye(config.hidden_size, dtype=np.float32)
  if (
      weight is None
      or bias is None
      or not np.allclose(weight, identity, atol=1e-6)
      or np.any(np.abs(bias) > 1e-6)
  ):
    raise ConversionError(
        f"{source}: embedding_size == hidden_size == {config.hidden_size} "
        f"but {PROJECTION} is not the identity; ours (as the original) has "
        "no projection then: this model cannot be converted"
    )
  return {
      k: v for k, v in tensors.items() if not k.startswith(PROJECTION + ".")
  }


def projection_identity(config: AlbertConfig) -> Dict[str, np.ndarray]:
  """The identity `embedding_hidden_mapping_in` transformers needs for an
  E == H model (none otherwise)."""
  if config.embedding_size != config.hidden_size:
    return {}
  return {
      f"{PROJECTION}.weight": np.eye(config.hidden_size, dtype=np.float32),
      f"{PROJECTION}.bias": np.zeros([config.hidden_size], np.float32),
  }
