"""Training curves from TensorBoard event files, and their PNG plots.

The trainer writes one TensorBoard run per directory under the model
directory (`train`, `eval`, `eval_<name>`); `read_scalars` reads them back
without TensorBoard, and `plot` draws them with matplotlib (headless).
"""

import os
from typing import Dict, List, Mapping, Sequence, Tuple

Curve = List[Tuple[int, float]]


def read_scalars(directory: str, tags: Sequence[str]) -> Dict[str, Curve]:
  """tag -> [(step, value)] sorted by step, over every event file in
  `directory` (a missing directory gives empty curves). A step written twice
  (a resumed run) keeps the last value read."""
  # Imported here: the experiment driver and the demo run TensorFlow in
  # their child processes and load it themselves only to read the curves.
  import tensorflow as tf

  points: Dict[str, Dict[int, float]] = {t: {} for t in tags}
  names = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
  for name in names:
    if "tfevents" not in name:
      continue
    for event in tf.compat.v1.train.summary_iterator(
        os.path.join(directory, name)
    ):
      for value in event.summary.value:
        if value.tag in points:
          points[value.tag][event.step] = float(tf.make_ndarray(value.tensor))
  return {t: sorted(p.items()) for t, p in points.items()}


def plot(
    path: str,
    lines: Mapping[str, Curve],
    ylabel: str,
    title: str,
    scale: float = 1.0,
) -> str:
  """One PNG at `path`: a line per label (values times `scale`), written
  under a temporary name and renamed when complete. Returns `path`."""
  # Imported here: matplotlib takes a second to load and only plots need it;
  # the backend must be chosen before pyplot is imported.
  import matplotlib

  matplotlib.use("Agg")
  from matplotlib import pyplot as plt

  figure, axes = plt.subplots(figsize=(6, 4))
  for label, points in lines.items():
    if points:
      steps, values = zip(*points)
      marker = "o" if len(points) <= 30 else None
      axes.plot(steps, [scale * v for v in values], marker=marker, label=label)
  axes.set_xlabel("training step")
  axes.set_ylabel(ylabel)
  axes.set_title(title)
  axes.grid(alpha=0.3)
  axes.legend()
  figure.tight_layout()
  tmp = path + ".tmp.png"
  figure.savefig(tmp, dpi=100)
  plt.close(figure)
  os.replace(tmp, path)
  return path
