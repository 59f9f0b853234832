"""`ReplicaSteps`: what one replica runs in a training or evaluation step.

The train step: the task's loss totals all-reduced over the replicas, the
gradients of each micro-batch's share of the global loss summed (gradient
accumulation), clipped and applied (`clipped_update`), the metrics
updated, and the loss share added to the loop's totals on the device
(`LoopTotals`). The eval step: the model and the metrics.

`TrainerConfig.jit_compile` compiles the whole train and eval steps with
XLA where the strategy has one replica (the forward and backward passes
of every micro-batch, the gradient sum, the clipping, the optimizer
update and the metrics); with several replicas, each micro-batch's
forward and backward pass (the gradient all-reduce stays outside XLA).
Under `TPUStrategy` the whole step is compiled in any case.
"""

from typing import Sequence, Tuple

import tensorflow as tf
import tf_keras

from official.core.loop_totals import LoopTotals
from official.core.loop_totals import split_batch
from official.core.task import Task
from official.core.trainer_config import TrainerConfig
from official.modeling import fusion
from official.modeling.no_autograph import as_written
from official.modeling import recompute
from official.training.clipped_update import clipped_update


class ReplicaSteps:
  """The train and eval steps of one replica (call them in `strategy.run`).

  Args:
    task: the task (loss, metrics).
    model, optimizer: built in the strategy's scope.
    config: accumulation, clipping, precision, XLA, recompute, fusion.
    micro_batch_size: examples per replica per micro-batch.
    metrics: (train metrics, eval metrics).
    totals: where the train step adds its loss share.
    replicas: replicas in sync.
    tpu: under `TPUStrategy` (compiled by it).

  Attributes:
    train, eval: the steps, XLA-compiled where `whole_step_xla`.
    whole_step_xla: whether `jit_compile` compiles the whole steps.
  """

  def __init__(
      self,
      *,
      task: Task,
      model: tf_keras.Model,
      optimizer,
      config: TrainerConfig,
      micro_batch_size: int,
      metrics: Tuple[Sequence, Sequence],
      totals: LoopTotals,
      replicas: int,
      tpu: bool = False,
  ):
    self.task, self.model, self.optimizer = task, model, optimizer
    self.config = config
    self.micro_batch_size = micro_batch_size
    self.train_metrics, self.eval_metrics = metrics
    self.totals = totals
    self.whole_step_xla = config.jit_compile and replicas == 1 and not tpu
    # The steps are graph code as written (official/modeling/no_autograph.py):
    # the accumulation loop is a `tf.while_loop`, so AutoGraph rewrites
    # nothing here (rewriting `_train` cost 0.5 s of every training
    # process's start).
    self._grad_fn = tf.function(
        self._micro_batch_gradients,
        jit_compile=config.jit_compile and not self.whole_step_xla,
        autograph=False,
    )
    # What `_train` calls besides `_grad_fn`, kept out of AutoGraph's
    # recursive rewriting (Python branches on settings only).
    self._loss_totals = as_written(task.loss_totals)
    self._update_metrics = as_written(task.update_metrics)
    self._finish_step = as_written(self._apply_gradients)
    self.train = as_written(self._train)
    self.eval = as_written(self._eval)
    if self.whole_step_xla:
      self.train = tf.function(self._train, jit_compile=True, autograph=False)
      self.eval = tf.function(self._eval, jit_compile=True, autograph=False)

  def _scales_loss(self) -> bool:
    return isinstance(
        self.optimizer, tf_keras.mixed_precision.LossScaleOptimizer
    )

  def _micro_batch_gradients(self, batch, totals):
    variables, c = self.model.trainable_variables, self.config
    with (
        tf.GradientTape() as tape,
        recompute.scope(c.recompute, self.model),
        fusion.scope(c.fused_kernels),
    ):
      outputs = self.model(batch, training=True)
      losses = self.task.compute_loss(outputs, batch, totals)
      loss = losses["loss"]
      if self._scales_loss():
        loss = self.optimizer.get_scaled_loss(loss)
    grads = tape.gradient(loss, variables)
    grads = [
        tf.zeros_like(v) if g is None else tf.convert_to_tensor(g)
        for g, v in zip(grads, variables)
    ]
    return losses, grads, outputs

  def _train(self, batch):
    """One optimizer step on this replica's `batch` (micro-batch x
    accumulation examples); its loss share goes to the loop's totals."""
    context = tf.distribute.get_replica_context()
    totals = context.all_reduce(
        tf.distribute.ReduceOp.SUM, self._loss_totals(batch)
    )
    accumulation = self.config.gradient_accumulation_steps
    if accumulation == 1:
      losses, grads, outputs = self._grad_fn(batch, totals)
      self._update_metrics(self.train_metrics, outputs, batch, losses)
      loss = losses["loss"]
    else:
      # [A x M, ...] -> [A, M, ...]: micro-batch i is a slice of static
      # shape, as XLA needs it.
      micro_batches = {
          k: split_batch(v, accumulation, self.micro_batch_size)
          for k, v in batch.items()
      }

      def add_micro_batch(i, grads, loss):
        micro = {k: v[i] for k, v in micro_batches.items()}
        losses, micro_grads, outputs = self._grad_fn(micro, totals)
        self._update_metrics(self.train_metrics, outputs, micro, losses)
        grads = [a + g for a, g in zip(grads, micro_grads)]
        return i + 1, grads, loss + losses["loss"]

      _, grads, loss = tf.while_loop(
          lambda i, grads, loss: i < accumulation,
          add_micro_batch,
          (
              tf.constant(0),
              [tf.zeros_like(v) for v in self.model.trainable_variables],
              tf.constant(0.0),
          ),
      )
    self._finish_step(grads, loss)

  def _apply_gradients(self, grads, loss):
    """Unscales, clips and applies the summed gradients; adds the loss."""
    if self._scales_loss():
      grads = self.optimizer.get_unscaled_gradients(grads)
    variables = self.model.trainable_variables
    clipped_update(self.optimizer, grads, variables, self.config.clip_norm)
    self.totals.add(loss, self.optimizer.iterations)

  def _eval(self, batch):
    outputs = self.model(batch, training=False)
    self.task.update_metrics(self.eval_metrics, outputs, batch)
