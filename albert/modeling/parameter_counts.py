"""Parameter counts of an ALBERT configuration, per component.

The counts come from the real Keras model built on CPU, not from a formula;
docs/reference.md section 2 lists the released sizes' figures. Its weights
start as zeros rather than as their initializers' random draws, of which only
the shapes would be read: counting xxlarge's 223 million then takes about half
the time and 0.7 GB less memory (docs/performance.md, "The test suite's
time").
"""

from typing import Dict

import numpy as np
import tensorflow as tf

from albert.modeling.config import AlbertConfig
from albert.modeling.encoder import AlbertEncoder
from albert.modeling.pretrainer import AlbertPretrainer


def _count(variables, exclude=()) -> int:
  """Number of scalars in `variables`, skipping those in `exclude` (tied)."""
  skip = {id(v) for v in exclude}
  return int(sum(np.prod(v.shape) for v in variables if id(v) not in skip))


def _zeros(next_creator, **kwargs):
  """A variable creator: zeros in place of an initializer's draw."""
  shape, dtype = kwargs.get("shape"), kwargs.get("dtype")
  if (
      callable(kwargs.get("initial_value"))
      and dtype is not None
      and shape is not None
      and tf.TensorShape(shape).is_fully_defined()
  ):
    kwargs["initial_value"] = lambda: tf.zeros(shape, dtype)
  return next_creator(**kwargs)


def parameter_counts(config: AlbertConfig) -> Dict[str, int]:
  """Builds the pretrainer for `config` and counts its parameters per part."""
  with tf.variable_creator_scope(_zeros):
    return _counts(config)


def _counts(config: AlbertConfig) -> Dict[str, int]:
  encoder = AlbertEncoder.from_config_object(config)
  pretrainer = AlbertPretrainer(encoder)
  pretrainer(pretrainer.dummy_inputs())
  transformer = encoder.transformer
  attention = [v for b in transformer.attention_blocks for v in b.weights]
  ffn = [v for b in transformer.ffn_blocks for v in b.weights]
  counts = {
      "embedding_params": _count(encoder.embeddings.weights),
      "attention_params": _count(attention),
      "ffn_params": _count(ffn),
      "pooler_params": _count(encoder.pooler.weights),
      "backbone_params": _count(encoder.weights),
      # The tied word-embedding table is counted once, in the backbone.
      "masked_lm_head_params": _count(
          pretrainer.masked_lm.weights, exclude=encoder.weights
      ),
      "sentence_order_head_params": _count(pretrainer.sentence_order.weights),
      "pretrainer_params": _count(pretrainer.weights),
      "attention_weight_sets": len(transformer.attention_blocks),
      "ffn_weight_sets": len(transformer.ffn_blocks),
  }
  counts["heads_params"] = (
      counts["masked_lm_head_params"] + counts["sentence_order_head_params"]
  )
  return counts
