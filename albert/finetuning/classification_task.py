"""`ClassificationTask`: loss and metrics of logits-per-label tasks.

Shared by GLUE (classes, or one score for STS-B regression) and RACE (one
logit per option). The model returns `logits` [B, C]; the batch holds
`label` (int32 class index, or float32 score when `is_regression`).
Losses are sums over this batch divided by the number of examples in the
global batch (`official/core/task.py`), i.e. the mean over the global batch;
with class weights (`class_weight_vector`) the sum of the examples' weights
divides instead, and `focal_gamma` makes it the focal loss
(`albert/finetuning/class_weights.py`).
"""

from typing import Dict, List

import tensorflow as tf
import tf_keras

from albert.finetuning import class_weights
from albert.finetuning.finetune_task import FinetuneTask


class ClassificationTask(FinetuneTask):
  """Cross-entropy over classes, or squared error for a regression score."""

  is_regression: bool = False
  # [C] float32 weight of each class (None: all 1), and the focal exponent:
  # set by tasks that offer them, once the training labels are counted.
  class_weight_vector = None
  focal_gamma: float = 0.0

  def _weighted(self) -> bool:
    return not self.is_regression and (
        self.class_weight_vector is not None or bool(self.focal_gamma)
    )

  def loss_totals(self, batch: Dict[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
    totals = {"examples": tf.cast(tf.shape(batch["label"])[0], tf.float32)}
    if self._weighted():
      totals["weights"] = tf.reduce_sum(
          class_weights.label_weights(batch["label"], self.class_weight_vector)
      )
    return totals

  def _per_example_loss(self, outputs, batch) -> tf.Tensor:
    """[B] cross-entropy (or squared error) of each example."""
    if self.is_regression:
      return tf.square(outputs["logits"][:, 0] - batch["label"])
    return tf_keras.losses.sparse_categorical_crossentropy(
        batch["label"], outputs["logits"], from_logits=True
    )

  def compute_loss(self, outputs, batch, totals):
    if self._weighted():
      terms = class_weights.softmax_loss(
          batch["label"],
          outputs["logits"],
          self.class_weight_vector,
          self.focal_gamma,
      )
      return {"loss": tf.reduce_sum(terms) / totals["weights"]}
    loss = tf.reduce_sum(self._per_example_loss(outputs, batch)) / (
        totals["examples"]
    )
    return {"loss": loss}

  def build_metrics(self) -> List[tf_keras.metrics.Metric]:
    if self.is_regression:
      return [tf_keras.metrics.Mean(name="squared_error")]
    return [
        tf_keras.metrics.SparseCategoricalAccuracy(name="accuracy"),
        tf_keras.metrics.Mean(name="cross_entropy"),
    ]

  def update_metrics(self, metrics, outputs, batch, losses=None):
    del losses  # Its per-example terms are cheap to recompute.
    by_name = {m.name: m for m in metrics}
    per_example = self._per_example_loss(outputs, batch)
    if self.is_regression:
      by_name["squared_error"].update_state(per_example)
      return
    by_name["accuracy"].update_state(batch["label"], outputs["logits"])
    by_name["cross_entropy"].update_state(per_example)
