"""Parameter counts of an ALBERT configuration, per component.

The counts come from the real Keras model built on CPU, not from a formula;
docs/reference.md section 2 lists the released sizes' figures.
"""

from typing import Dict

import numpy as np

from albert.modeling.config import AlbertConfig
from albert.modeling.encoder import AlbertEncoder
from albert.modeling.pretrainer import AlbertPretrainer


def _count(variables, exclude=()) -> int:
  """Number of scalars in `variables`, skipping those in `exclude` (tied)."""
  skip = {id(v) for v in exclude}
  return int(sum(np.prod(v.shape) for v in variables if id(v) not in skip))


def parameter_counts(config: AlbertConfig) -> Dict[str, int]:
  """Builds the pretrainer for `config` and counts its parameters per part."""
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
