"""The paper's ablations as experiments: which models each one trains."""

import dataclasses
from typing import Dict, List, Sequence


@dataclasses.dataclass(frozen=True)
class Variant:
  """One model of an experiment.

  Attributes:
    name: short name (directory and table row).
    sentence_task: the task of its training data and loss.
    gin_params: extra bindings (architecture).
    label: the row label in results.md.
  """

  name: str
  sentence_task: str
  gin_params: Sequence[str] = ()
  label: str = ""


EXPERIMENTS: Dict[str, List[Variant]] = {
    # Paper Table 5: the sentence-level task.
    "sentence_task": [
        Variant("none", "none", label="None"),
        Variant("nsp", "nsp", label="NSP"),
        Variant("sop", "sop", label="SOP"),
    ],
    # Paper Table 4: what the layers share.
    "sharing": [
        Variant(s, "sop", (f"AlbertConfig.sharing='{s}'",), label)
        for s, label in (
            ("all", "all-shared"),
            ("attention", "shared-attention"),
            ("ffn", "shared-FFN"),
            ("none", "not-shared"),
        )
    ],
    # Paper Table 3: the factorized embedding size E.
    "embedding_size": [
        Variant(f"E{e}", "sop", (f"AlbertConfig.embedding_size={e}",), f"E={e}")
        for e in (16, 32, 64, 128)
    ],
}
EVAL_SETS = ("sop", "nsp")
CURVE_METRICS = ("masked_lm_accuracy", "sentence_order_accuracy")
