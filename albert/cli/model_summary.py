r"""Prints the parameter counts of an ALBERT configuration, per component.

  python tools/model_summary.py --gin_file=gin/base.gin
  python tools/model_summary.py --gin_file=gin/xxlarge.gin --json

The counts come from the real Keras model built on CPU, not from a formula.
"""

import json
from typing import Dict, Sequence

from absl import flags

from albert import cli
from albert.modeling.config import AlbertConfig
from albert.modeling.parameter_counts import parameter_counts
from albert import configs


FLAGS = flags.DEFINE_multi_string(
    "gin_file", [], "Gin files, layered in order (e.g. gin/base.gin)."
)
PARAMS = flags.DEFINE_multi_string(
    "gin_param", [], "Extra gin bindings, e.g. 'AlbertConfig.num_layers=4'."
)
JSON = flags.DEFINE_bool(
    "json", False, "Print one JSON object instead of a table."
)


def _table(config, counts: Dict[str, int]) -> str:
  rows = [
      ("embeddings (V*E + pos + type + LN + E->H)", "embedding_params"),
      (
          f"attention ({counts['attention_weight_sets']} weight set(s))",
          "attention_params",
      ),
      (
          f"feed-forward ({counts['ffn_weight_sets']} weight set(s))",
          "ffn_params",
      ),
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
  cli.unexpected_arguments(argv)
  configs.parse(FLAGS.value, PARAMS.value)
  config = AlbertConfig()
  counts = parameter_counts(config)
  if JSON.value:
    print(json.dumps({"config": config.to_dict(), **counts}, sort_keys=True))
  else:
    print(_table(config, counts))


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
