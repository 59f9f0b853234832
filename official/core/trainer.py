"""`Trainer`: the one training loop, for every strategy and precision.

The global batch of one optimizer step is split as
    global_batch_size = micro_batch x gradient_accumulation_steps x replicas.
Each replica receives micro_batch x accumulation examples per step, computes
the task's loss totals, all-reduces them, and accumulates the gradients of its
micro-batches' shares of the global loss (see `official.core.task`). The
summed gradient is then clipped and applied (`clipped_update`), so the update
equals the single-device update on the whole global batch.

A compiled loop runs `steps_per_loop` steps without reading any step's
result on the host, so an accelerator is never idle waiting on Python: each
replica adds its loss share, and counts non-finite ones, in variables on
its device (`LoopTotals`), which the host reads once when the loop ends. A
non-finite loss then stops the run; the checkpoint from before the loop
stays. Preemption is checked between loops (`official.core.preemption`).

What each replica runs, and what XLA compiles of it:
`official.core.replica_steps`.
"""

import os
from typing import Dict, Optional

from absl import logging
import tensorflow as tf
import tf_keras

from official.core import checkpoints
from official.core import compiled_loops
from official.core import input_pipeline
from official.core.loop_totals import LoopTotals
from official.core.replica_steps import ReplicaSteps
from official.core.best_checkpoint import BestCheckpoint
from official.core import model_config_file
from official.core import preemption
from official.core import run_lock
from official.core.progress import Progress
from official.core.seekable_stream import POSITION
from official.core.seekable_stream import PositionKeeper
from official.core.summaries import Summaries
from official.core.task import Task
from official.core.trainer_config import TrainerConfig
from official.distribute import strategy as strategy_lib
from official.errors import Preempted
from official.io import atomic_write
from official.io import files
from official.optimization.optimizer_config import OptimizerConfig


class NonFiniteLossError(FloatingPointError):
  """The training loss became NaN or infinite."""


class Trainer:
  """Trains `task` under `strategy`, checkpointing into `model_dir`.

  Args:
    task: the `Task`; it must expose `global_batch_size`.
    strategy: from `official.distribute.strategy.make_strategy`.
    optimizer_config: optimizer and learning-rate schedule.
    config: steps, intervals, accumulation, precision, XLA, seed.
    model_dir: checkpoints, TensorBoard summaries and `model_config.json`.
    best_checkpoint: evaluates every `eval_interval` steps and at the end,
      instead of the task's eval inputs (`official.core.best_checkpoint`);
      each such step is a checkpoint, so a resumed run knows it.
  """

  def __init__(
      self,
      *,
      task: Task,
      strategy: tf.distribute.Strategy,
      optimizer_config: OptimizerConfig,
      config: TrainerConfig,
      model_dir: str,
      best_checkpoint: Optional[BestCheckpoint] = None,
  ):
    self.task = task
    self.strategy = strategy
    self.config = config
    self.model_dir = model_dir
    self.micro_batch_size = config.micro_batch_size(
        task.global_batch_size, strategy.num_replicas_in_sync
    )
    self.best = best_checkpoint
    self.is_chief, self._write_dir = strategy_lib.chief_and_write_dir(
        strategy, model_dir
    )
    # Checks only: nothing is written before the first checkpoint (`_save`).
    self._needs_model_config = False
    # A new model_dir that the run fails to fill is removed again.
    self._new_dir = self.is_chief and not files.exists(model_dir)
    if self.best is not None:
      self.best.write, self.best.write_dir = self.is_chief, self._write_dir
    if self.is_chief:
      files.check_writable_dir(model_dir, "model_dir")
      self._needs_model_config = model_config_file.check(
          model_dir, task.model_config_dict()
      )

    tf_keras.mixed_precision.set_global_policy(config.mixed_precision_policy)
    tf_keras.utils.set_random_seed(config.seed)
    if config.deterministic:
      tf.config.experimental.enable_op_determinism()
    with strategy.scope():
      self.model = task.build_model()
      optimizer = optimizer_config.build()
      if config.mixed_precision_policy == "mixed_float16":
        optimizer = tf_keras.mixed_precision.LossScaleOptimizer(optimizer)
      optimizer.build(self.model.trainable_variables)
      self.optimizer = optimizer
      self.train_metrics = task.build_metrics()
      self.eval_metrics = task.build_metrics()
    # Where each replica's input stream goes on; a resume starts there.
    self._positions = PositionKeeper(strategy)
    self._learning_rate = optimizer_config.schedule()
    self.checkpoint = tf.train.Checkpoint(
        model=self.model,
        optimizer=self.optimizer,
        input_position=self._positions.variable,
    )
    # Every worker saves (saving is collective); only the chief's copies are
    # kept in model_dir, the others go to a scratch directory inside it.
    self.checkpoint_manager = checkpoints.StateFirstCheckpointManager(
        self.checkpoint,
        self._write_dir,
        max_to_keep=config.max_checkpoints if self.is_chief else 1,
        step_counter=self.optimizer.iterations,
    )
    self._totals = LoopTotals(strategy)
    steps = ReplicaSteps(
        task=task,
        model=self.model,
        optimizer=self.optimizer,
        config=config,
        micro_batch_size=self.micro_batch_size,
        metrics=(self.train_metrics, self.eval_metrics),
        totals=self._totals,
        replicas=strategy.num_replicas_in_sync,
        tpu=isinstance(strategy, tf.distribute.TPUStrategy),
    )
    self.whole_step_xla = steps.whole_step_xla
    self.train_step, self.eval_step = steps.train, steps.eval
    self._clock = preemption.LoopClock()
    self._signals = preemption.SignalWatch(
        config.preemption_grace_seconds, time_left=self._clock.time_left
    )
    self._first_nonfinite = None  # of the last loop, on this worker
    # `tf.while_loop`s (official/core/compiled_loops.py): no AutoGraph.
    self._train_loop = tf.function(self._train_loop_fn, autograph=False)
    self._eval_loop = tf.function(self._eval_loop_fn, autograph=False)
    self._summaries = Summaries(model_dir, enabled=self.is_chief)
    self._committed = False
    self._config_files = {}
    self.train_history = []  # (step, logged values) per loop of this run

  def latest_checkpoint(self) -> Optional[str]:
    """The newest checkpoint in model_dir (written by the chief)."""
    return tf.train.latest_checkpoint(self.model_dir)

  @property
  def global_step(self) -> int:
    return int(self.optimizer.iterations.numpy())

  # --- Inside strategy.run -------------------------------------------------

  def _run(self, fn, args):
    return strategy_lib.run(self.strategy, fn, args)

  # --- Compiled loops (cross-replica context) -----------------------------

  def _train_loop_fn(self, iterator, num_steps):
    self._run(self._totals.reset, ())
    compiled_loops.train_steps(
        self._run, self._train_step_at, iterator, num_steps
    )

  def _train_step_at(self, batch):
    """A training step (replica context) that keeps where this replica's
    stream goes on, if the batch says (`POSITION`)."""
    batch = dict(batch)
    position = batch.pop(POSITION, None)
    self.train_step(batch)
    if position is not None:
      self._positions.record(position)

  def _eval_loop_fn(self, iterator, num_steps):
    return compiled_loops.eval_steps(
        self._run, self.eval_step, iterator, num_steps
    )

  # --- Host loop ---------------------------------------------------------

  def _dataset(self, *, training: bool, start_step: int = 0):
    per_replica = self.micro_batch_size * (
        self.config.gradient_accumulation_steps if training else 1
    )
    return input_pipeline.distributed_dataset(
        self.strategy,
        self.task,
        batch_size=per_replica,
        training=training,
        start_step=start_step,
        positions=self._positions.saved() if start_step else None,
    )

  def train_iterator(self, start_step: int = 0):
    """An iterator over the training stream, after `start_step` steps: from
    the restored checkpoint's input positions where it has them."""
    return iter(self._dataset(training=True, start_step=start_step))

  def run_steps(self, iterator, num_steps: int):
    """Runs `num_steps` training steps in one compiled loop.

    Returns:
      (mean loss of the finite steps, whether every loss was finite). The
      loop does not stop at a non-finite loss (that would make every step
      wait for the last): its later steps train on non-finite weights, which
      the caller must not save.
    """
    with self._clock.loop(num_steps):
      self._train_loop(iterator, tf.constant(num_steps))
      loss_sum, finite, self._first_nonfinite = self._totals.read()
    return loss_sum / num_steps, finite

  def train(
      self, config_files: Optional[Dict[str, str]] = None
  ) -> Dict[str, float]:
    """Trains to `train_steps` (resuming from the latest checkpoint).

    Nothing of the run is in model_dir before its first checkpoint (a new
    directory's `model_config.json` just before it); after it come
    `config_files` (name -> text, e.g. the operative gin config), atomically,
    and the summaries held back. A run that fails before that leaves the
    directory byte-identical (a new model_dir is removed again).

    Returns:
      The last evaluation's metrics (train metrics if there is no eval data).

    Raises:
      NonFiniteLossError: the loss became NaN/inf; the last good checkpoint
        is kept and the run stops.
      ModelDirLockedError: another run holds model_dir (`run_lock`).
      Preempted: SIGTERM or SIGINT stopped it (`preemption`).
    """
    with run_lock.hold(self._write_dir), self._signals:  # workers: scratch
      try:
        return self._train(config_files)
      except BaseException:
        if self._new_dir and not self.latest_checkpoint():
          # Nothing to resume from: leave no trace of the failed run.
          files.rmtree(self.model_dir)
        raise
      finally:  # a worker's copies (saving is collective) are not read
        if not self.is_chief:
          files.rmtree(self._write_dir)

  def _train(self, config_files: Optional[Dict[str, str]]) -> Dict[str, float]:
    self._config_files = dict(config_files or {})
    self._committed = False
    self._summaries.hold()
    restored = self.restore_latest()
    if not restored:
      with self.strategy.scope():
        initial = self.task.initialize(self.model, self.optimizer)
      if initial:
        logging.info("Starting from the weights of %s at step 0.", initial)
    step = self.global_step
    saved_step = step if restored else None
    if restored:
      logging.info("Resumed from %s at step %d.", restored, step)
    c = self.config
    stop = self._resume_evaluations(step)  # step 0 unless restored
    iterator = self.train_iterator(start_step=step)
    progress = Progress(c.train_steps, start=step)
    results: Dict[str, float] = {}
    while step < c.train_steps and not stop:
      loss, finite = self.run_steps(iterator, c.next_stop(step) - step)
      if not finite:
        where = (
            f"at step {self._first_nonfinite}"
            if self._first_nonfinite is not None
            else f"on another worker between steps {step + 1} and "
            f"{self.global_step}"
        )
        raise NonFiniteLossError(
            f"non-finite loss {where}: training stopped; last good "
            f"checkpoint kept: {self.latest_checkpoint()}"
        )
      step = self.global_step
      progress.update(step)
      results = self._log_train(step, loss, progress)
      if self._signals.stop_requested(self.strategy, self._run):
        self._save(step)  # preempted: save this step and stop
        raise Preempted(
            self._signals.stop_message(step, self.latest_checkpoint())
        )
      eval_due = self._eval_due(step) and step < c.train_steps
      if step % c.checkpoint_interval == 0 or (eval_due and self.best):
        self._save(step)
        saved_step = step
      if eval_due:
        stop = self._evaluate_step(step)
    # The same decision on every worker: saving is collective.
    if saved_step != step:
      self._save(step)
    logging.info(
        "Training done at step %d; checkpoint %s",
        step,
        self.latest_checkpoint(),
    )
    self._commit()  # a run that had nothing left to train
    if self.best is not None:
      if not self.best.evaluated(step):
        self._evaluate_step(step)
      return self.best.results()
    eval_results = self.evaluate(step)
    return eval_results or results

  def _eval_due(self, step: int) -> bool:
    interval = self.config.eval_interval
    return bool(interval) and step % interval == 0

  def _resume_evaluations(self, step: int) -> bool:
    """Reads back earlier evaluations up to `step` (evaluating `step` if a
    kill came first); whether early stopping already ended the run."""
    if self.best is None:
      return False
    self.best.resume(step)
    if step and self._eval_due(step) and not self.best.evaluated(step):
      return self._evaluate_step(step)
    return self.best.should_stop

  def _evaluate_step(self, step: int) -> bool:
    """The evaluation at `step`; returns whether to stop early."""
    if self.best is None:
      self.evaluate(step)
      return False
    self._summaries.write("eval", step, self.best.evaluate(self.model, step))
    return self.best.should_stop

  def _log_train(self, step: int, loss: float, progress: Progress):
    values = {
        "loss": loss,
        "learning_rate": float(self._learning_rate(step - 1)),
    }
    values.update({m.name: float(m.result()) for m in self.train_metrics})
    for m in self.train_metrics:
      m.reset_state()
    examples_per_s = progress.rate * self.task.global_batch_size
    values["examples_per_second"] = examples_per_s
    self._summaries.write("train", step, values)
    self.train_history.append((step, values))
    shown = " | ".join(
        f"{k} {v:.4g}"
        for k, v in values.items()
        if k not in ("examples_per_second",)
    )
    logging.info(
        "train %s | %.1f examples/s | %s",
        progress.describe(),
        examples_per_s,
        shown,
    )
    return values

  def restore_latest(self) -> Optional[str]:
    """Restores the newest checkpoint of model_dir that reads back whole
    (`checkpoints.restore_newest`); None when there is none."""

    def restore(path):
      self._positions.clear()
      checkpoints.restore(
          self.checkpoint,
          self.model,
          path,
          optional={"input_position": self._positions.variable},
      )

    return checkpoints.restore_newest(self.model_dir, restore)

  def _save(self, step: int) -> None:
    """Saves ckpt-`step` (nothing of it left on failure); `_commit`s. A new
    directory gets model_config.json first: no checkpoint is without it."""
    with self._clock.save():
      if self._needs_model_config and self.is_chief:
        files.makedirs(self.model_dir)
        model_config_file.write(self.model_dir, self.task.model_config_dict())
        self._needs_model_config = False
      self._positions.before_save()
      checkpoints.save(self.checkpoint_manager, self._write_dir, step)
      self._commit()

  def _commit(self) -> None:
    """After the run's first checkpoint (once; the chief only): the
    `config_files` given to `train` (and model_config.json if still due),
    atomically, then the summaries held back until now."""
    committed, self._committed = self._committed, True
    if committed or not self.is_chief:
      return
    files.makedirs(self.model_dir)
    contents = {
        os.path.join(self.model_dir, name): text
        for name, text in self._config_files.items()
    }
    if self._needs_model_config:
      contents[model_config_file.path(self.model_dir)] = (
          model_config_file.dumps(self.task.model_config_dict())
      )
    atomic_write.write_atomic_files(contents)
    self._needs_model_config = False
    checkpoints.remove_leftovers(self.model_dir)
    self._summaries.release()

  def evaluate(
      self, step: Optional[int] = None, summary_name: str = "eval"
  ) -> Dict[str, float]:
    """Runs `eval_steps` eval batches; {} if the task has no eval data.

    Summaries go to model_dir/`summary_name` (one TensorBoard run per
    evaluation set).
    """
    if not self.task.has_eval_inputs():
      return {}
    step = self.global_step if step is None else step
    for m in self.eval_metrics:
      m.reset_state()
    iterator = iter(self._dataset(training=False))
    batches = int(
        self._eval_loop(iterator, tf.constant(self.config.eval_steps))
    )
    results = {m.name: float(m.result()) for m in self.eval_metrics}
    self._summaries.write(summary_name, step, results)
    logging.info(
        "eval at step %d over %d batches: %s",
        step,
        batches,
        " | ".join(f"{k} {v:.4g}" for k, v in results.items()),
    )
    return results
