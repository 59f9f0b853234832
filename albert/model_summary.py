r"""Prints the parameter counts of an ALBERT configuration, per component.

  python -m albert.model_summary --gin_file=gin/base.gin
  python -m albert.model_summary --gin_file=gin/xxlarge.gin --json

The counts come from the real Keras model built on CPU, not from a formula.
"""

import json
import os
import sys
from typing import Dict, Sequence

from absl import app
from absl import flags
import numpy as np

from official.config import gin_files

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FLAGS = flags.DEFINE_multi_string(
    "gin_file", [], "Gin files, layered in order (e.g. gin/base.gin).")
PARAMS = flags.DEFINE_multi_string(
    "gin_param", [], "Extra gin bindings, e.g. 'AlbertConfig.num_layers=4'.")
JSON = flags.DEFINE_bool("json", False, "Print one JSON object instead of a table.")


def _count(variables, exclude=()) -> int:
  """Number of scalars in `variables`, skipping those in `exclude` (tied)."""
  skip = {id(v) for v in exclude}
  return int(sum(np.prod(v.shape) for v in variables if id(v) not in skip))


def parameter_counts(config) -> Dict[str, int]:
  """Builds the pretrainer for `config` and counts its parameters per part."""
  from albert.encoder import AlbertEncoder  # pylint: disable=g-import-not-at-top
  from albert.pretrainer import AlbertPretrainer  # pylint: disable=g-import-not-at-top
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
      "masked_lm_head_params": _count(pretrainer.masked_lm.weights,
                                      exclude=encoder.weights),
      "sentence_order_head_params": _count(pretrainer.sentence_order.weights),
      "pretrainer_params": _count(pretrainer.weights),
      "attention_weight_sets": len(transformer.attention_blocks),
      "ffn_weight_sets": len(transformer.ffn_blocks),
  }
  counts["heads_params"] = (counts["masked_lm_head_params"] +
                            counts["sentence_order_head_params"])
  return counts


def _table(config, counts: Dict[str, int]) -> str:
  rows = [
      ("embeddings (V*E + pos + type + LN + E->H)", "embedding_params"),
      (f"attention ({counts['attention_weight_sets']} weight set(s))",
       "attention_params"),
      (f"feed-forward ({counts['ffn_weight_sets']} weight set(s))",
       "ffn_params"),
      ("pooler", "pooler_params"),
      ("backbone total", "backbone_params"),
      ("masked-LM head (tied embeddings)", "masked_lm_head_params"),
      ("sentence-order head", "sentence_order_head_params"),
      ("heads total", "heads_params"),
      ("pretrainer total", "pretrainer_params"),
  ]
  lines = [
      f"ALBERT V={config.vocab_size} E={config.embedding_size} "
      f"H={config.hidden_size} L={config.num_layers} heads={config.num_heads} "
      f"FFN={config.intermediate_size} G={config.num_hidden_groups} "
      f"K={config.inner_group_num} sharing={config.sharing}"
  ]
  lines += [f"  {label:<44} {counts[key]:>15,}" for label, key in rows]
  return "\n".join(lines)


def main(argv: Sequence[str]) -> None:
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
  from albert.config import AlbertConfig  # pylint: disable=g-import-not-at-top
  try:
    gin_files.parse_gin(FLAGS.value, PARAMS.value, search_paths=[REPO_ROOT])
    config = AlbertConfig()
  except ValueError as e:
    sys.exit(f"model_summary: {str(e).splitlines()[0]}")
  counts = parameter_counts(config)
  if JSON.value:
    print(json.dumps({"config": config.to_dict(), **counts}, sort_keys=True))
  else:
    print(_table(config, counts))


if __name__ == "__main__":
  app.run(main)
