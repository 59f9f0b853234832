"""The TensorFlow Model Garden's ALBERT names: the one table (tf-models-official
`official/nlp/modeling/networks/albert_encoder.py` `AlbertEncoder`,
`layers/transformer_encoder_block.py`, `layers/masked_lm.py`).

The Model Garden's `AlbertEncoder` is the all-shared ALBERT (one
`TransformerEncoderBlock` applied `num_layers` times) and names each weight
two ways:
  - its variable name, e.g. `transformer/self_attention/query/kernel`: what a
    SavedModel keeps (TF Hub / Kaggle `albert_en_*`, made by
    `export_tfhub_lib`), and what the Model Garden's TF1 converter maps onto;
  - its object path in a `tf.train.Checkpoint`, e.g.
    `layer_with_weights-5/_attention_layer/_query_dense/kernel` below the
    encoder: what object-based checkpoints (`tf.train.Checkpoint(encoder=..)`)
    are keyed by. The functional model numbers its weighted layers in
    order, so everything after the optional `embedding_projection`
    (E != H only) shifts by one.
Attention kernels are per head, [H, N, H / N] (output [N, H / N, H]), the
same elements as our [H, H] kernels. The masked-LM head's matrix is the word
embedding table (tied); the sentence-order head has no place in the Model
Garden's ALBERT.
"""

import json
from typing import Any, List, Mapping, Optional

from albert.checkpoint_conversion.errors import ConversionError
from albert.checkpoint_conversion.name_table import NameTable
from albert.checkpoint_conversion.name_table import TensorName
from albert.modeling import weight_names as ours
from albert.modeling.config import AlbertConfig

FORMAT_NAME = "Model Garden"
# The encoder's Keras class as a SavedModel's metadata names it.
ENCODER_CLASSES = ("Text>AlbertEncoder", "AlbertEncoder")
# Model Garden activation (as serialized in a SavedModel's Keras metadata)
# -> ours. Its registered `Text>gelu` is the tanh approximation, our `gelu`;
# Keras' own `gelu` is the exact one.
ACTIVATIONS_IN = {
    "Text>gelu": "gelu",
    "gelu": "gelu_exact",
    "relu": "relu",
    "tanh": "tanh",
}
# Ours -> the name `official.modeling.tf_utils.get_activation` takes.
ACTIVATIONS_OUT = {"gelu": "gelu", "gelu_new": "gelu", "relu": "relu"}
LAYER_NORM_EPSILON = 1e-12
MLM_SCOPE = "cls/predictions/"  # variable names of the masked-LM head

_ATTENTION_DENSE = {  # ours -> (object path, variable name)
    "query": ("_attention_layer/_query_dense", "self_attention/query"),
    "key": ("_attention_layer/_key_dense", "self_attention/key"),
    "value": ("_attention_layer/_value_dense", "self_attention/value"),
    "output_dense": (
        "_attention_layer/_output_dense",
        "self_attention/attention_output",
    ),
}
_FFN_DENSE = {
    "intermediate": ("_intermediate_dense", "intermediate"),
    "output_dense": ("_output_dense", "output"),
}


def check_config(config: AlbertConfig, what: str) -> None:
  """Fails unless the Model Garden's `AlbertEncoder` can hold the model."""
  if (
      config.sharing != "all"
      or config.num_hidden_groups != 1
      or config.inner_group_num != 1
  ):
    raise ConversionError(
        f"{what}: sharing={config.sharing!r}, num_hidden_groups="
        f"{config.num_hidden_groups}, inner_group_num="
        f"{config.inner_group_num}: the Model Garden's AlbertEncoder has one "
        "shared block (sharing='all', one group, one inner layer)"
    )
  if config.hidden_act not in ACTIVATIONS_OUT:
    raise ConversionError(
        f"{what}: hidden_act={config.hidden_act!r} has no Model Garden name "
        f"(it takes {sorted(ACTIVATIONS_OUT)})"
    )
  if config.layer_norm_epsilon != LAYER_NORM_EPSILON:
    raise ConversionError(
        f"{what}: layer_norm_epsilon={config.layer_norm_epsilon} is not the "
        f"Model Garden's fixed {LAYER_NORM_EPSILON}"
    )


def _entries(config: AlbertConfig, *, by_path: bool) -> List[TensorName]:
  """The encoder's weights; `by_path`: object paths, else variable names."""
  h, n = config.hidden_size, config.num_heads
  factorized = config.embedding_size != config.hidden_size
  block = f"layer_with_weights-{5 if factorized else 4}/"
  pooler = f"layer_with_weights-{6 if factorized else 5}/"
  entries = []

  def add(path, name, our, shape=None):
    entries.append(
        TensorName(path if by_path else name, our, external_shape=shape)
    )

  add(
      "layer_with_weights-0/embeddings",
      "word_embeddings/embeddings",
      f"{ours.EMBEDDINGS}/word_embeddings",
  )
  add(
      "layer_with_weights-1/embeddings",
      "position_embedding/embeddings",
      f"{ours.EMBEDDINGS}/position_embeddings",
  )
  add(
      "layer_with_weights-2/embeddings",
      "type_embeddings/embeddings",
      f"{ours.EMBEDDINGS}/type_embeddings",
  )
  for p in ("gamma", "beta"):
    add(
        f"layer_with_weights-3/{p}",
        f"embeddings/layer_norm/{p}",
        f"{ours.EMBEDDINGS}/layer_norm/{p}",
    )
  if factorized:
    for p in ("kernel", "bias"):
      add(
          f"layer_with_weights-4/{p}",
          f"embedding_projection/{p}",
          f"{ours.EMBEDDINGS}/embedding_projection/{p}",
      )
  for our, (path, name) in _ATTENTION_DENSE.items():
    if our == "output_dense":
      kernel, bias = (n, h // n, h), None
    else:
      kernel, bias = (h, n, h // n), (n, h // n)
    add(
        f"{block}{path}/kernel",
        f"transformer/{name}/kernel",
        ours.attention_weight(0, f"{our}/kernel"),
        kernel,
    )
    add(
        f"{block}{path}/bias",
        f"transformer/{name}/bias",
        ours.attention_weight(0, f"{our}/bias"),
        bias,
    )
  for our, (path, name) in _FFN_DENSE.items():
    for p in ("kernel", "bias"):
      add(
          f"{block}{path}/{p}",
          f"transformer/{name}/{p}",
          ours.ffn_weight(0, f"{our}/{p}"),
      )
  for p in ("gamma", "beta"):
    add(
        f"{block}_attention_layer_norm/{p}",
        f"transformer/self_attention_layer_norm/{p}",
        ours.attention_weight(0, f"layer_norm/{p}"),
    )
    add(
        f"{block}_output_layer_norm/{p}",
        f"transformer/output_layer_norm/{p}",
        ours.ffn_weight(0, f"layer_norm/{p}"),
    )
  for p in ("kernel", "bias"):
    add(f"{pooler}{p}", f"pooler_transform/{p}", f"{ours.POOLER}/{p}")
  return entries


def _mlm_entries(*, by_path: bool) -> List[TensorName]:
  """The masked-LM head's own weights (its matrix is the word embeddings)."""
  rows = [
      ("dense/kernel", "transform/dense/kernel", "dense/kernel"),
      ("dense/bias", "transform/dense/bias", "dense/bias"),
      ("layer_norm/gamma", "transform/LayerNorm/gamma", "layer_norm/gamma"),
      ("layer_norm/beta", "transform/LayerNorm/beta", "layer_norm/beta"),
      # The layer's weight is named `output_bias/bias`; in a checkpoint
      # key a `/` inside one name is written `.S`.
      ("output_bias.Sbias", "output_bias/bias", "output_bias"),
  ]
  return [
      TensorName(
          f"masked_lm/{path}" if by_path else MLM_SCOPE + name,
          f"{ours.MASKED_LM}/{our}",
      )
      for path, name, our in rows
  ]


def object_table(config: AlbertConfig) -> NameTable:
  """Object paths: the encoder's below `encoder/`, the head's below
  `masked_lm/` (the layout of `tf.train.Checkpoint(**pretrainer.
  checkpoint_items)`, which the Model Garden's training and TF Hub export
  use)."""
  entries = [
      TensorName(f"encoder/{e.external}", e.ours, False, e.external_shape)
      for e in _entries(config, by_path=True)
  ]
  return NameTable(
      entries + _mlm_entries(by_path=True), format_name=FORMAT_NAME
  )


def variable_table(config: AlbertConfig) -> NameTable:
  """Variable names, as a SavedModel keeps them (head under MLM_SCOPE)."""
  return NameTable(
      _entries(config, by_path=False) + _mlm_entries(by_path=False),
      format_name=FORMAT_NAME,
  )


def mlm_names(table: NameTable) -> List[str]:
  """The external names of the masked-LM head in `table`."""
  return [e.external for e in table.entries if e.ours.startswith("masked_lm/")]


# Our names of the head the Model Garden's ALBERT does not have.
SENTENCE_ORDER_WEIGHTS = ours.SENTENCE_ORDER_WEIGHTS


def config_from_keras(
    data: Mapping[str, Any], *, source: str
) -> Optional[AlbertConfig]:
  """Our config from an `AlbertEncoder`'s Keras config (`get_config()`), or
  None if its activation has no name of ours (then --albert_config is
  needed)."""
  activation = data.get("activation")
  if isinstance(activation, dict):  # {"class_name": "function", "config": ..}
    activation = activation.get("config")
  if activation not in ACTIVATIONS_IN:
    return None
  try:
    return AlbertConfig.explicit(
        vocab_size=data["vocab_size"],
        embedding_size=data["embedding_width"] or data["hidden_size"],
        hidden_size=data["hidden_size"],
        num_layers=data["num_layers"],
        num_heads=data["num_attention_heads"],
        intermediate_size=data["intermediate_size"],
        hidden_act=ACTIVATIONS_IN[activation],
        max_position_embeddings=data["max_sequence_length"],
        type_vocab_size=data["type_vocab_size"],
    )
  except (KeyError, TypeError, ValueError) as e:
    raise ConversionError(
        f"{source}: the AlbertEncoder config {json.dumps(data)[:200]} is "
        f"not one we can read ({e}); give --albert_config"
    ) from e
