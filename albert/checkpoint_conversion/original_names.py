"""The original TF1 checkpoint names: the one table (original `modeling.py`
`transformer_model` and `run_pretraining.py` heads).

The original stores group g, inner layer k of the shared stack under
`bert/encoder/transformer/group_{g}/inner_group_{k}/`; we hold it as weight
set g * K + k of `SharedTransformerBlock` (K = inner_group_num). Kernels have
the Keras layout [in, out] in both; only the sentence-order
`cls/seq_relationship/output_weights` is stored [2, H], the transpose of our
Dense kernel [H, 2]. Optimizer slots are `<variable>/adam_m` and
`<variable>/adam_v` (LAMB uses the same names) and the step is `global_step`.
"""

from typing import List

from albert.modeling import weight_names as ours
from albert.checkpoint_conversion.errors import ConversionError
from albert.checkpoint_conversion.name_table import NameTable
from albert.checkpoint_conversion.name_table import TensorName
from albert.modeling.config import AlbertConfig

FORMAT_NAME = "original TF1"
GLOBAL_STEP = "global_step"
# Slot suffix -> our LAMB slot (first moment m, second moment v).
SLOT_SUFFIXES = {"/adam_m": "m", "/adam_v": "v"}
# Activations the original code knows, by our name -> its name.
ACTIVATIONS = {
    "gelu": "gelu",
    "gelu_new": "gelu",
    "relu": "relu",
    "tanh": "tanh",
}
# The original's LayerNorm epsilon is fixed in its code.
LAYER_NORM_EPSILON = 1e-12

_EMBEDDINGS = {
    "bert/embeddings/word_embeddings": f"{ours.EMBEDDINGS}/word_embeddings",
    "bert/embeddings/position_embeddings": (
        f"{ours.EMBEDDINGS}/position_embeddings"
    ),
    "bert/embeddings/token_type_embeddings": (
        f"{ours.EMBEDDINGS}/type_embeddings"
    ),
    "bert/embeddings/LayerNorm/gamma": f"{ours.EMBEDDINGS}/layer_norm/gamma",
    "bert/embeddings/LayerNorm/beta": f"{ours.EMBEDDINGS}/layer_norm/beta",
    "bert/encoder/embedding_hidden_mapping_in/kernel": (
        f"{ours.EMBEDDINGS}/embedding_projection/kernel"
    ),
    "bert/encoder/embedding_hidden_mapping_in/bias": (
        f"{ours.EMBEDDINGS}/embedding_projection/bias"
    ),
}
# Inside group_{g}/inner_group_{k}/ -> inside our attention set.
_ATTENTION = {
    "attention_1/self/query/kernel": "query/kernel",
    "attention_1/self/query/bias": "query/bias",
    "attention_1/self/key/kernel": "key/kernel",
    "attention_1/self/key/bias": "key/bias",
    "attention_1/self/value/kernel": "value/kernel",
    "attention_1/self/value/bias": "value/bias",
    "attention_1/output/dense/kernel": "output_dense/kernel",
    "attention_1/output/dense/bias": "output_dense/bias",
    "LayerNorm/gamma": "layer_norm/gamma",
    "LayerNorm/beta": "layer_norm/beta",
}
# Inside group_{g}/inner_group_{k}/ -> inside our FFN set.
_FFN = {
    "ffn_1/intermediate/dense/kernel": "intermediate/kernel",
    "ffn_1/intermediate/dense/bias": "intermediate/bias",
    "ffn_1/intermediate/output/dense/kernel": "output_dense/kernel",
    "ffn_1/intermediate/output/dense/bias": "output_dense/bias",
    "LayerNorm_1/gamma": "layer_norm/gamma",
    "LayerNorm_1/beta": "layer_norm/beta",
}
_HEADS = {
    "bert/pooler/dense/kernel": (f"{ours.POOLER}/kernel", False),
    "bert/pooler/dense/bias": (f"{ours.POOLER}/bias", False),
    "cls/predictions/transform/dense/kernel": (
        f"{ours.MASKED_LM}/dense/kernel",
        False,
    ),
    "cls/predictions/transform/dense/bias": (
        f"{ours.MASKED_LM}/dense/bias",
        False,
    ),
    "cls/predictions/transform/LayerNorm/gamma": (
        f"{ours.MASKED_LM}/layer_norm/gamma",
        False,
    ),
    "cls/predictions/transform/LayerNorm/beta": (
        f"{ours.MASKED_LM}/layer_norm/beta",
        False,
    ),
    "cls/predictions/output_bias": (f"{ours.MASKED_LM}/output_bias", False),
    "cls/seq_relationship/output_weights": (
        f"{ours.SENTENCE_ORDER}/kernel",
        True,
    ),  # [2, H] vs [H, 2]
    "cls/seq_relationship/output_bias": (f"{ours.SENTENCE_ORDER}/bias", False),
}


# brightmart/albert_zh's own models (not its `*_google` ones, which use the
# original's code and names): its `modeling.py` projects the word embeddings
# to H (`word_embeddings_2`, no bias) before adding position and token-type
# tables of width H and normalising in H, where ALBERT adds them in E,
# normalises in E and projects after (with a bias); its layers are
# `layer_shared` (or `layer_N`), and its xlarge / xxlarge are pre-LN.
_BRIGHTMART_MARKERS = (
    "bert/embeddings/word_embeddings_2",
    "bert/encoder/layer_shared/",
)


def check_layout(names, source: str) -> None:
  """Refuses, in one line, checkpoints of other ALBERT implementations whose
  computation ours cannot reproduce (brightmart/albert_zh's own)."""
  if any(n.startswith(_BRIGHTMART_MARKERS) for n in names):
    raise ConversionError(
        f"{source} is a brightmart/albert_zh model of its own layout "
        "(bert/embeddings/word_embeddings_2, bert/encoder/layer_shared): it "
        "projects the word embeddings to the hidden size before adding "
        "position and token-type embeddings of that size and has no "
        "projection bias (its xlarge / xxlarge are also pre-LN), which "
        "ALBERT does not compute; its *_google_zh models (the original's "
        "names) convert with --from=original"
    )


def check_config(config: AlbertConfig, what: str) -> None:
  """Fails unless the original code can hold the model of `config`.

  Args:
    config: the model's config.
    what: the config's origin, for the message.
  """
  if config.sharing != "all":
    raise ConversionError(
        f"{what}: sharing={config.sharing!r} has no original TF1 layout "
        "(the original shares everything: sharing='all')"
    )
  if config.hidden_act not in ACTIVATIONS:
    raise ConversionError(
        f"{what}: hidden_act={config.hidden_act!r} is unknown to the "
        f"original code (it knows {sorted(set(ACTIVATIONS.values()))})"
    )
  if config.layer_norm_epsilon != LAYER_NORM_EPSILON:
    raise ConversionError(
        f"{what}: layer_norm_epsilon={config.layer_norm_epsilon!r} cannot be "
        f"expressed: the original code always uses {LAYER_NORM_EPSILON}"
    )


def block_prefix(group: int, inner: int) -> str:
  """The original scope of group `group`, inner layer `inner`."""
  return f"bert/encoder/transformer/group_{group}/inner_group_{inner}/"


def name_table(config: AlbertConfig) -> NameTable:
  """The original name of every weight of the pretrainer of `config`."""
  entries: List[TensorName] = [
      TensorName(k, v)
      for k, v in _EMBEDDINGS.items()
      # The original has no E -> H projection when E == H.
      if config.embedding_size != config.hidden_size
      or "embedding_hidden_mapping_in" not in k
  ]
  inner_num = config.inner_group_num
  for group in range(config.num_hidden_groups):
    for inner in range(inner_num):
      index = group * inner_num + inner
      prefix = block_prefix(group, inner)
      entries += [
          TensorName(prefix + k, ours.attention_weight(index, v))
          for k, v in _ATTENTION.items()
      ]
      entries += [
          TensorName(prefix + k, ours.ffn_weight(index, v))
          for k, v in _FFN.items()
      ]
  entries += [
      TensorName(k, name, transpose) for k, (name, transpose) in _HEADS.items()
  ]
  return NameTable(entries, format_name=FORMAT_NAME)
