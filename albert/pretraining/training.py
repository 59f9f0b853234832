"""Pretraining as a library: what `python -m albert.run_pretraining` runs.

`pretrain(model_dir=..., gin_file=[...], ...)` parses the gin files
(`gin/pretrain.gin` first), builds the `PretrainTask`, the strategy and the
`Trainer`, writes the operative config and trains, resuming from the latest
checkpoint in `model_dir`.
"""

import json
from typing import Dict, Optional, Sequence, Tuple

from absl import logging
import gin
import tensorflow as tf

from albert import configs
from albert import model_dir as model_dir_lib
from albert.pretraining.task import PretrainTask
from albert.registry import fetch as registry
from official.core.trainer import Trainer
from official.core.trainer_config import TrainerConfig
from official.distribute import strategy as strategy_lib
from official.io import atomic_write
from official.optimization.optimizer_config import OptimizerConfig

DEFAULT_GIN = "gin/pretrain.gin"


def _build(gin_file, gin_param, strategy, tpu, model_dir):
  """Parses the gin files and builds (task, trainer config, trainer)."""
  configs.parse([DEFAULT_GIN, *gin_file], gin_param)
  task = PretrainTask()
  task.init_checkpoint = registry.resolve(
      task.init_checkpoint, before_strategy=strategy
  )
  trainer_config = TrainerConfig()
  optimizer_config = OptimizerConfig()
  strategy_lib.check_setup(
      strategy,
      tpu,
      mixed_precision_policy=trainer_config.mixed_precision_policy,
      paths={
          "--model_dir": model_dir,
          "PretrainTask.train_file_pattern": task.train_file_pattern,
          "PretrainTask.eval_file_pattern": task.eval_file_pattern,
          "PretrainTask.init_checkpoint": task.init_checkpoint,
      },
  )
  # Before any other TensorFlow op: multi-worker collectives are configured
  # when the runtime starts.
  distribution = strategy_lib.make_strategy(strategy, tpu=tpu)
  task.validate_data()
  trainer = Trainer(
      task=task,
      strategy=distribution,
      optimizer_config=optimizer_config,
      config=trainer_config,
      model_dir=model_dir,
  )
  return task, trainer_config, trainer


def evaluate_pretrained(
    *,
    model_dir: str,
    gin_file: Sequence[str] = (),
    gin_param: Sequence[str] = (),
    summary_name: str = "eval",
    strategy: str = "default",
    tpu: Optional[str] = None,
) -> Tuple[Dict[str, float], str]:
  """Evaluates the latest checkpoint of model_dir on
  `PretrainTask.eval_file_pattern` (set it with gin), without training.

  Summaries go to model_dir/`summary_name`, at the checkpoint's step.

  Returns:
    (the metrics, the checkpoint).

  Raises:
    ValueError: no checkpoint, no eval data or data of another shape.
  """
  task, _, trainer = _build(gin_file, gin_param, strategy, tpu, model_dir)
  if not task.has_eval_inputs():
    raise ValueError(
        "evaluation needs PretrainTask.eval_file_pattern: set it with "
        "--gin_param"
    )
  checkpoint = trainer.restore_latest()
  if not checkpoint:
    raise ValueError(f"no checkpoint in {model_dir} to evaluate")
  try:
    return trainer.evaluate(summary_name=summary_name), checkpoint
  except tf.errors.OpError as e:
    task.explain_data_error(e)
    raise


def write_metrics(path: str, metrics: Dict[str, float], checkpoint: str):
  """Writes {"metrics": ..., "checkpoint": ...} as JSON, atomically."""
  atomic_write.write_atomic(
      path,
      json.dumps({"metrics": metrics, "checkpoint": checkpoint}, indent=2)
      + "\n",
  )


def pretrain(
    *,
    model_dir: str,
    gin_file: Sequence[str] = (),
    gin_param: Sequence[str] = (),
    strategy: str = "default",
    tpu: Optional[str] = None,
) -> Tuple[Dict[str, float], str]:
  """Parses the configuration, builds the task and trains.

  Returns:
    (final eval metrics, or train metrics without eval data; the checkpoint).
  """
  task, trainer_config, trainer = _build(
      gin_file, gin_param, strategy, tpu, model_dir
  )
  # Written with model_config.json once the run has restored and trained its
  # first steps: a run refused before that leaves model_dir as it was.
  config_files = {model_dir_lib.GIN_FILE: gin.operative_config_str()}
  logging.info(
      "Pretraining: %d steps of %d examples (%d per replica micro-batch x %d "
      "accumulation x %d replicas), model_dir %s",
      trainer_config.train_steps,
      task.global_batch_size,
      trainer.micro_batch_size,
      trainer_config.gradient_accumulation_steps,
      trainer.strategy.num_replicas_in_sync,
      model_dir,
  )
  try:
    results = trainer.train(config_files=config_files)
  except tf.errors.OpError as e:
    task.explain_data_error(e)
    raise
  return results, trainer.latest_checkpoint()
