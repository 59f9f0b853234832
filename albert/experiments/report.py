"""An experiment's report: Table 4 / 5 in Markdown and the held-out curves."""

import os
from typing import Dict, List

from albert.experiments import curves
from albert.experiments.variants import CURVE_METRICS


def results_table(results: Dict) -> str:
  """Markdown: Table 5's columns, or parameters and accuracies."""
  rows = []
  if results["experiment"] == "sentence_task":
    header = (
        "| trained on | MLM accuracy | NSP accuracy | SOP accuracy | "
        "parameters | train time |\n|---|---|---|---|---|---|"
    )
  else:
    header = (
        "| variant | parameters | MLM accuracy | SOP accuracy | NSP accuracy "
        "| train time |\n|---|---|---|---|---|---|"
    )
  for v in results["variants"].values():
    sop, nsp = v["eval"]["sop"], v["eval"]["nsp"]
    mlm = 100 * sop["masked_lm_accuracy"]
    nsp_acc = 100 * nsp.get("sentence_order_accuracy", float("nan"))
    sop_acc = 100 * sop.get("sentence_order_accuracy", float("nan"))
    params = f"{v['backbone_params'] / 1e6:.2f} M"
    minutes = f"{v['train_seconds'] / 60:.1f} min"
    if results["experiment"] == "sentence_task":
      cells = [v["label"], f"{mlm:.1f}", f"{nsp_acc:.1f}", f"{sop_acc:.1f}"]
      cells += [params, minutes]
    else:
      cells = [v["label"], params, f"{mlm:.1f}", f"{sop_acc:.1f}"]
      cells += [f"{nsp_acc:.1f}", minutes]
    rows.append("| " + " | ".join(cells) + " |")
  return (
      f"# {results['experiment']}: {results['train_steps']} steps\n\n"
      "Accuracies in %, on held-out documents (masked-LM accuracy on the "
      "SOP-style set).\n\n" + header + "\n" + "\n".join(rows) + "\n"
  )


def plot_curves(results: Dict, out_dir: str) -> List[str]:
  """One PNG per held-out metric, a line per variant; returns the paths."""
  return [
      curves.plot(
          os.path.join(out_dir, f"{metric}.png"),
          {
              v["label"]: v["curves"].get(metric, [])
              for v in results["variants"].values()
          },
          ylabel=f"held-out {metric.replace('_', ' ')} (%)",
          title=f"{results['experiment']}: {metric}",
          scale=100,
      )
      for metric in CURVE_METRICS
  ]
