"""`Task`: what a trainer needs to know about one training problem.

A task builds its model and its input pipeline, computes its loss and updates
its metrics. It knows nothing about distribution: the trainer calls it inside
`strategy.run` and hands it the global normalisers its loss needs.

Global normalisation is what makes every strategy and every gradient
accumulation setting compute the same update as one device on the whole global
batch: a loss such as sum(w * nll) / sum(w) is split as
sum over micro-batches and replicas of sum_local(w * nll) / W_global, where
W_global is summed over the whole global batch before any gradient is taken.
"""

import abc
from typing import Any, Dict, List, Optional

import tensorflow as tf
import tf_keras


class Task(abc.ABC):
  """Base class of training tasks."""

  @abc.abstractmethod
  def build_model(self) -> tf_keras.Model:
    """The model, built (variables created) under the current strategy scope."""

  @abc.abstractmethod
  def build_inputs(
      self,
      input_context: Optional[tf.distribute.InputContext],
      *,
      training: bool,
      batch_size: int,
      skip_examples: int = 0,
      start=None,
  ) -> tf.data.Dataset:
    """Batches of `batch_size` examples for one input pipeline.

    Args:
      input_context: this pipeline's place among all pipelines (or None).
      training: the training stream (shuffled, repeated) or the eval stream.
      batch_size: examples per batch (per replica, times accumulation steps).
      skip_examples: examples of this pipeline's training stream already used.
      start: a `seekable_stream.StreamPosition` to resume at; given only to
        a task whose training batches carry `seekable_stream.POSITION`.
    """

  @abc.abstractmethod
  def loss_totals(self, batch: Dict[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
    """Additive float32 normalisers of this batch (e.g. number of examples)."""

  @abc.abstractmethod
  def compute_loss(
      self,
      outputs: Dict[str, tf.Tensor],
      batch: Dict[str, tf.Tensor],
      totals: Dict[str, tf.Tensor],
  ) -> Dict[str, tf.Tensor]:
    """This batch's share of the global loss.

    Args:
      outputs: the model's outputs on `batch`.
      batch: the inputs and labels.
      totals: `loss_totals` summed over the whole global batch.

    Returns:
      dict with `loss` (the sum over all batches and replicas of these values
      is the global loss), any named components scaled the same way, and any
      unscaled per-example terms `update_metrics` reuses in training.
    """

  @abc.abstractmethod
  def build_metrics(self) -> List[tf_keras.metrics.Metric]:
    """Fresh metric objects (created under the strategy scope)."""

  @abc.abstractmethod
  def update_metrics(
      self,
      metrics: List[tf_keras.metrics.Metric],
      outputs: Dict[str, tf.Tensor],
      batch: Dict[str, tf.Tensor],
      losses: Optional[Dict[str, tf.Tensor]] = None,
  ) -> None:
    """The one place metrics are updated, for train and eval alike.

    In training `losses` is what `compute_loss` returned for this batch, so
    per-example terms it holds need not be computed twice; in evaluation it
    is None.
    """

  def has_eval_inputs(self) -> bool:
    """Whether `build_inputs(training=False)` has data to evaluate on."""
    return False

  def initialize(self, model, optimizer) -> Optional[str]:
    """Sets the starting weights of a run whose model_dir has no checkpoint
    (e.g. from another run's checkpoint: continued pretraining). Called in
    the strategy's scope; returns what it read, or None (the default: the
    model's own initialisers)."""
    del model, optimizer
    return None

  def model_config_dict(self) -> Dict[str, Any]:
    """JSON-able model description; a run refuses to resume if it changed."""
    return {}
