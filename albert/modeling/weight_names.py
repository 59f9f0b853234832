"""Our name of every `AlbertPretrainer` weight: the converters' common side,
and what continued pretraining matches checkpoints by.

A weight's name is its attribute path in the model, e.g.
`encoder/transformer/attention_blocks/3/query/kernel` (these are also the
object paths of the TF2 checkpoint, below `model/`). The tied word-embedding
matrix is named once, `encoder/embeddings/word_embeddings`. The external
name tables (`original_names`, `huggingface_names`) build our side of each
entry with the functions below.
"""

import re
from typing import Dict

import tensorflow as tf

from albert.modeling.pretrainer import AlbertPretrainer

EMBEDDINGS = "encoder/embeddings"
POOLER = "encoder/pooler"
MASKED_LM = "masked_lm"
SENTENCE_ORDER = "sentence_order/dense"

# The pretraining heads' weights (`pretrainer_weights` names them the same).
MASKED_LM_WEIGHTS = (
    f"{MASKED_LM}/dense/kernel",
    f"{MASKED_LM}/dense/bias",
    f"{MASKED_LM}/layer_norm/gamma",
    f"{MASKED_LM}/layer_norm/beta",
    f"{MASKED_LM}/output_bias",
)
SENTENCE_ORDER_WEIGHTS = (f"{SENTENCE_ORDER}/kernel", f"{SENTENCE_ORDER}/bias")

# Sub-layers of one AttentionBlock / FeedForwardBlock, by attribute name.
ATTENTION_DENSE = ("query", "key", "value", "output_dense")
FFN_DENSE = ("intermediate", "output_dense")


def attention_weight(index: int, name: str) -> str:
  """Our name of weight `name` (e.g. `query/kernel`) of attention `index`."""
  return f"encoder/transformer/attention_blocks/{index}/{name}"


def ffn_weight(index: int, name: str) -> str:
  """Our name of weight `name` (e.g. `intermediate/bias`) of FFN set `index`."""
  return f"encoder/transformer/ffn_blocks/{index}/{name}"


_BLOCK = re.compile(r"^(encoder/transformer/(?:attention|ffn)_blocks/)(\d+)/")


def first_block_name(name: str) -> str:
  """The name of the same weight in block 0 of its kind (e.g.
  `.../ffn_blocks/2/intermediate/kernel` -> `.../ffn_blocks/0/...`); names
  outside the shared blocks are returned unchanged."""
  return _BLOCK.sub(r"\g<1>0/", name)


def _dense(prefix: str, layer) -> Dict[str, tf.Variable]:
  return {f"{prefix}/kernel": layer.kernel, f"{prefix}/bias": layer.bias}


def _layer_norm(prefix: str, layer) -> Dict[str, tf.Variable]:
  return {f"{prefix}/gamma": layer.gamma, f"{prefix}/beta": layer.beta}


def encoder_weights(encoder) -> Dict[str, tf.Variable]:
  """Every variable of a built `AlbertEncoder`, by our name (`encoder/...`)."""
  embeddings = encoder.embeddings
  weights = {
      f"{EMBEDDINGS}/word_embeddings": embeddings.word_embeddings,
      f"{EMBEDDINGS}/position_embeddings": embeddings.position_embeddings,
      f"{EMBEDDINGS}/type_embeddings": embeddings.type_embeddings,
  }
  weights.update(_layer_norm(f"{EMBEDDINGS}/layer_norm", embeddings.layer_norm))
  if embeddings.embedding_projection is not None:  # none when E == H
    weights.update(
        _dense(
            f"{EMBEDDINGS}/embedding_projection",
            embeddings.embedding_projection,
        )
    )
  stack = encoder.transformer
  for i, block in enumerate(stack.attention_blocks):
    for name in ATTENTION_DENSE:
      weights.update(_dense(attention_weight(i, name), getattr(block, name)))
    weights.update(
        _layer_norm(attention_weight(i, "layer_norm"), block.layer_norm)
    )
  for i, block in enumerate(stack.ffn_blocks):
    for name in FFN_DENSE:
      weights.update(_dense(ffn_weight(i, name), getattr(block, name)))
    weights.update(_layer_norm(ffn_weight(i, "layer_norm"), block.layer_norm))
  weights.update(_dense(POOLER, encoder.pooler))
  return weights


def check_complete(model, weights: Dict[str, tf.Variable], where: str) -> None:
  """Fails unless `weights` names every variable of `model` exactly once.

  Raises:
    RuntimeError: the model holds variables the table does not know (the
      model changed and the converters were not updated).
  """
  named = {id(v) for v in weights.values()}
  unnamed = [v.name for v in model.weights if id(v) not in named]
  if unnamed or len(named) != len(weights):
    raise RuntimeError(f"{where} does not name {unnamed}: update it")


def pretrainer_weights(pretrainer: AlbertPretrainer) -> Dict[str, tf.Variable]:
  """Every variable of a built `pretrainer`, by our name.

  Raises:
    RuntimeError: the model holds variables this table does not know (the
      model changed and the converters were not updated).
  """
  weights = encoder_weights(pretrainer.encoder)
  head = pretrainer.masked_lm
  weights.update(_dense(f"{MASKED_LM}/dense", head.dense))
  weights.update(_layer_norm(f"{MASKED_LM}/layer_norm", head.layer_norm))
  weights[f"{MASKED_LM}/output_bias"] = head.output_bias
  weights.update(_dense(SENTENCE_ORDER, pretrainer.sentence_order.dense))
  check_complete(pretrainer, weights, "albert/modeling/weight_names.py")
  return weights
