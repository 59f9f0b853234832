"""Fine-tuning as a library: the pieces `python -m albert.run_finetuning` runs.

`run(mode=..., model_dir=..., gin_file=[...], ...)` parses the gin files
(`gin/finetune/finetune.gin` first), builds the task the recipe selects
(`finetuning_task.task_cls`) and trains, evaluates, predicts or exports.
"""

import dataclasses
import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from absl import logging
import gin
import tensorflow as tf

from albert import configs
from albert import model_dir as model_dir_lib
from official.core import best_checkpoint
from albert.finetuning import exporting
from albert.serving import onnx_export
from albert.finetuning import task_state
from albert.registry import fetch as registry
from albert.finetuning.finetune_task import FinetuneTask
from albert.finetuning.task_state import TaskState
from albert.finetuning.task_state import write_eval_results
# The task classes recipes select (gin knows a configurable once imported).
from albert.finetuning.glue.task import GlueTask  # noqa: F401
from albert.finetuning.race.task import RaceTask  # noqa: F401
from albert.finetuning.squad.task import SquadTask  # noqa: F401
from albert.finetuning.own_data import sentence_embedding  # noqa: F401
from albert.finetuning.own_data import text_classification  # noqa: F401
from albert.finetuning.own_data import text_multilabel  # noqa: F401
from albert.finetuning.own_data import token_classification  # noqa: F401
from official.core import checkpoints
from official.io import atomic_write
from official.io import files
from official.core.trainer import Trainer
from official.core.trainer_config import TrainerConfig
from official.distribute import strategy as strategy_lib
from official.distribute.replicated import Replicated
from official.optimization.optimizer_config import OptimizerConfig

DEFAULT_GIN = "gin/finetune/finetune.gin"
MODES = ("train", "train_and_eval", "eval", "predict", "export")
SEEDS_FILE = "seeds.json"


@gin.configurable
def finetuning_task(task_cls=gin.REQUIRED):
  """The task class a recipe selects: `finetuning_task.task_cls = @GlueTask`."""
  return task_cls


@gin.configurable
@dataclasses.dataclass(frozen=True)
class EpochSchedule:
  """Training length in epochs of the training examples, when a recipe says so.

  As the original run_squad_v1.py: epochs count examples (SQuAD: questions,
  not their doc-stride windows) and both counts are truncated.

  Attributes:
    train_epochs: when set, train_steps = int(examples / batch x epochs) and
      the learning rate decays to 0 over those steps.
    warmup_proportion: when set, warmup_steps = int(train_steps x proportion).
  """

  train_epochs: Optional[float] = None
  warmup_proportion: Optional[float] = None

  def apply(
      self,
      trainer_config: TrainerConfig,
      optimizer_config: OptimizerConfig,
      num_examples: int,
      global_batch_size: int,
  ):
    """(trainer_config, optimizer_config) with the derived step counts."""
    steps = trainer_config.train_steps
    changes = {}
    if self.train_epochs is not None:
      steps = max(1, int(num_examples / global_batch_size * self.train_epochs))
      trainer_config = dataclasses.replace(trainer_config, train_steps=steps)
      changes["decay_steps"] = steps
    if self.warmup_proportion is not None:
      changes["warmup_steps"] = int(steps * self.warmup_proportion)
    # One replace: the schedule is validated as a whole.
    optimizer_config = dataclasses.replace(optimizer_config, **changes)
    return trainer_config, optimizer_config


def build_task(
    *,
    gin_file: Sequence[str] = (),
    gin_param: Sequence[str] = (),
    **task_kwargs,
) -> FinetuneTask:
  """Parses the configuration and builds the task it selects."""
  configs.parse([DEFAULT_GIN, *gin_file], gin_param)
  task_cls = finetuning_task()
  return task_cls(**task_kwargs)


def restore_model(model, model_dir: str, checkpoint: Optional[str]) -> str:
  """Restores a fine-tuned model's weights (optimizer state ignored) from
  `checkpoint` (`best_checkpoint.resolve`: by default the dev-best)."""
  path = best_checkpoint.resolve(model_dir, checkpoint)
  model_dir_lib.restore_matched(
      tf.train.Checkpoint(model=model),
      path,
      f"checkpoint {path} does not hold this task's model",
  )
  logging.info("Restored %s", path)
  return path


def train(
    task: FinetuneTask,
    *,
    model_dir: str,
    strategy: Optional[tf.distribute.Strategy] = None,
    keep_best: bool = False,
) -> Tuple[Trainer, Dict[str, float]]:
  """Fine-tunes `task` into `model_dir`.

  With `keep_best` (the original's dev protocol), the model is evaluated on
  the first dev split every `TrainerConfig.eval_interval` steps and at the
  end, and the best by `task.selection_key` is kept in MODEL_DIR/best
  (`official.core.best_checkpoint`); training stops early after
  `TrainerConfig.early_stopping_patience` evaluations without improvement.

  Returns:
    (the trainer, its model trained; the best evaluation's metrics with
    `best_checkpoint_step`, or {} without `keep_best`).
  """
  distribution = strategy or tf.distribute.get_strategy()
  num_features = task.prepare_training_data()
  trainer_config, optimizer_config = EpochSchedule().apply(
      TrainerConfig(),
      OptimizerConfig(),
      task.epoch_size,
      task.global_batch_size,
  )
  best = None
  if keep_best:
    runner = Replicated(distribution, trainer_config.jit_compile)
    best = best_checkpoint.BestCheckpoint(
        model_dir,
        evaluate_fn=lambda model: task.evaluate(
            model, task.eval_splits[:1], runner
        ),
        metric=task.selection_key,
        patience=trainer_config.early_stopping_patience,
    )
  trainer = Trainer(
      task=task,
      strategy=distribution,
      optimizer_config=optimizer_config,
      config=trainer_config,
      model_dir=model_dir,
      best_checkpoint=best,
  )
  # Written with model_config.json once the run has passed its checks and
  # trained its first steps: a refused run leaves model_dir as it was.
  config_files = {
      model_dir_lib.GIN_FILE: gin.operative_config_str(),
      **task_state.files_of(task),
      **_tokenizer_copy(task, model_dir),
  }
  logging.info(
      "Fine-tuning %s: %d steps of %d features (%d training "
      "examples gave %d features), model_dir %s",
      task.name,
      trainer_config.train_steps,
      task.global_batch_size,
      task.num_train_examples,
      num_features,
      model_dir,
  )
  results = trainer.train(config_files=config_files)
  return trainer, (results if keep_best else {})


def _tokenizer_copy(task: FinetuneTask, model_dir: str) -> Dict[str, bytes]:
  """{its file name: bytes} of the task's tokenizer file, kept in MODEL_DIR
  with the first checkpoint (unless it is there), so that eval, predict and
  export find it without a flag."""
  path = task.tokenizer_file
  if not path or files.exists(os.path.join(model_dir, os.path.basename(path))):
    return {}
  return {os.path.basename(path): files.read_bytes(path, "the tokenizer file")}


def best_results(
    task: FinetuneTask,
    model,
    model_dir: str,
    results: Dict[str, float],
    runner: Optional[Replicated] = None,
) -> Dict[str, float]:
  """The dev-best checkpoint's `results` (of the first eval split), with the
  other eval splits (MNLI's mismatched) evaluated on its weights."""
  if len(task.eval_splits) > 1:
    restore_model(model, model_dir, "best")
    results = {**results, **task.evaluate(model, task.eval_splits[1:], runner)}
  return results


def trained_model(
    task: FinetuneTask,
    model_dir: str,
    checkpoint: Optional[str],
    strategy: Optional[tf.distribute.Strategy] = None,
    *,
    dev_choices: bool = False,
):
  """(the task's model, built in `strategy`'s scope and restored from
  `checkpoint`, the prefix read). With `dev_choices`, the task also takes
  what the dev evaluation chose (a null threshold, label thresholds), as
  prediction and every export do."""
  task.use_state(
      TaskState.of(model_dir, dev_choices=dev_choices, for_model=True)
  )
  with (strategy or tf.distribute.get_strategy()).scope():
    model = task.build_model()
  return model, restore_model(model, model_dir, checkpoint)


def recorded_recipe(gin_file: Sequence[str], model_dir: str) -> List[str]:
  """`gin_file`, else the recipe MODEL_DIR recorded (its operative gin
  config): a fine-tuned model directory describes itself, so eval, predict
  and export need only `--model_dir`."""
  if gin_file:
    return list(gin_file)
  recorded = os.path.join(model_dir, model_dir_lib.GIN_FILE)
  if not files.exists(recorded):
    return []
  logging.info("No --gin_file: the recipe %s recorded", recorded)
  return [recorded]


def is_finetuned_dir(model_dir: str) -> bool:
  """Whether MODEL_DIR (a `--seeds` run: its dev-best seed's) records a
  recipe that selects a fine-tuning task: a fine-tuned model directory, not
  a pretrained one."""
  recorded = os.path.join(best_seed_dir(model_dir), model_dir_lib.GIN_FILE)
  return files.exists(recorded) and "finetuning_task.task_cls" in (
      files.read_text(recorded)
  )


def load_trained(
    *,
    model_dir: str,
    checkpoint: Optional[str] = None,
    gin_file: Sequence[str] = (),
    gin_param: Sequence[str] = (),
    **task_kwargs,
) -> Tuple[FinetuneTask, Any, str]:
  """A fine-tuned model directory, loaded the one way every reader of one
  (prediction, the exports, the converters) loads it.

  Args:
    model_dir: a fine-tuning run's directory (a `--seeds` run: its dev-best
      seed's).
    checkpoint: `best_checkpoint.resolve`'s argument (default the dev-best).
    gin_file, gin_param: the task's recipe and size, as for training.
    **task_kwargs: the task's arguments (e.g. `data_dir`).

  Returns:
    (the task, told what MODEL_DIR knows: labels, dev-chosen thresholds;
    its model restored; the checkpoint prefix read).
  """
  model_dir = best_seed_dir(model_dir)
  task = build_task(
      gin_file=recorded_recipe(gin_file, model_dir),
      gin_param=gin_param,
      described_by=model_dir,
      **task_kwargs,
  )
  model, path = trained_model(task, model_dir, checkpoint, dev_choices=True)
  return task, model, path


def evaluate_checkpoints(
    task: FinetuneTask, model_dir: str, runner: Replicated
) -> Dict[str, float]:
  """Evaluates every checkpoint kept in `model_dir`, as the original's eval
  loop did; returns the best one's metrics (by `task.main_metric` on the
  first eval split) with its `best_checkpoint_step`, and writes all of them
  to MODEL_DIR/eval_all_checkpoints.json."""
  state = tf.train.get_checkpoint_state(model_dir)
  if not state or not state.all_model_checkpoint_paths:
    raise ValueError(f"no checkpoint in {model_dir} to evaluate")
  model, _ = trained_model(
      task,
      model_dir,
      state.all_model_checkpoint_paths[0],
      runner.strategy,
  )
  per_checkpoint = {}
  for path in state.all_model_checkpoint_paths:
    restore_model(model, model_dir, path)
    per_checkpoint[os.path.basename(path)] = task.evaluate(model, runner=runner)
  key = task.selection_key
  best = max(per_checkpoint, key=lambda name: per_checkpoint[name][key])
  atomic_write.write_atomic(
      os.path.join(model_dir, "eval_all_checkpoints.json"),
      json.dumps(per_checkpoint, indent=2, sort_keys=True),
  )
  logging.info(
      "Best checkpoint by %s: %s (%.4f)", key, best, per_checkpoint[best][key]
  )
  return {
      **per_checkpoint[best],
      "best_checkpoint_step": float(checkpoints.step_of(best)),
  }


def run(
    *,
    mode: str,
    model_dir: str,
    gin_file: Sequence[str] = (),
    gin_param: Sequence[str] = (),
    init_checkpoint: Optional[str] = None,
    checkpoint: Optional[str] = None,
    output_dir: Optional[str] = None,
    export_dir: Optional[str] = None,
    export_format: str = "saved_model",
    quantize: str = "none",
    strategy: Union[str, tf.distribute.Strategy] = "default",
    tpu: Optional[str] = None,
    **task_kwargs,
) -> Dict[str, float]:
  """One `--mode` of fine-tuning; returns the metrics it computed (if any).

  `strategy` is a `--strategy` name (with `tpu`), or a strategy already
  built (`run_seeds`: one per process). Training, evaluation and
  prediction run on its replicas; an export is written from one device.
  """
  if mode not in MODES:
    raise ValueError(f"mode={mode!r} is not one of {MODES}")
  if mode == "export" and not export_dir:
    raise ValueError("--mode=export needs --export_dir (a new directory)")
  onnx_export.check_quantize(
      quantize, export_format == "onnx", "--export_format"
  )
  if mode not in ("train", "train_and_eval"):
    if checkpoint is None:
      model_dir = best_seed_dir(model_dir)
    gin_file = recorded_recipe(gin_file, model_dir)
    task_kwargs.setdefault("described_by", model_dir)
  if init_checkpoint is not None:
    task_kwargs["init_checkpoint"] = registry.resolve(
        init_checkpoint,
        before_strategy=strategy if isinstance(strategy, str) else None,
    )
  task = build_task(gin_file=gin_file, gin_param=gin_param, **task_kwargs)
  if isinstance(strategy, str) and mode != "export":
    check_task_setup(task, model_dir, strategy, tpu)
    strategy = strategy_lib.make_strategy(strategy, tpu=tpu)
  elif mode == "export":
    strategy = None
  runner = Replicated(strategy, TrainerConfig().jit_compile)
  task.use_state(TaskState.of(model_dir))
  if mode == "eval" and checkpoint == "all":
    results = evaluate_checkpoints(task, model_dir, runner)
    logging.info("Eval results: %s", write_eval_results(model_dir, results))
    return results
  if mode in ("train", "train_and_eval"):
    trainer, results = train(
        task,
        model_dir=model_dir,
        strategy=strategy,
        keep_best=mode == "train_and_eval" and bool(task.eval_splits),
    )
    if mode == "train":
      return {}
    results = best_results(task, trainer.model, model_dir, results, runner)
    logging.info("Eval results: %s", write_eval_results(model_dir, results))
    return results
  model, path = trained_model(
      task,
      model_dir,
      checkpoint,
      strategy,
      dev_choices=mode in ("predict", "export"),
  )
  if mode == "predict":
    paths = task.predict_to_files(
        model, output_dir or os.path.join(model_dir, "predictions"), runner
    )
    logging.info("Wrote %s", ", ".join(paths))
    return {}
  if mode == "export":
    exporting.export(task, model, export_dir, export_format, quantize)
    return {}
  results = {
      **task.evaluate(model, runner=runner),
      "checkpoint_step": float(checkpoints.step_of(path)),
  }
  logging.info("Eval results: %s", write_eval_results(model_dir, results))
  return results


def check_task_setup(
    task: FinetuneTask, model_dir: str, strategy: str, tpu: Optional[str]
) -> None:
  """Refuses before any work what `strategy` cannot run (one line):
  `strategy_lib.check_setup` with the task's paths."""
  strategy_lib.check_setup(
      strategy,
      tpu,
      mixed_precision_policy=TrainerConfig().mixed_precision_policy,
      paths={
          "--model_dir": model_dir,
          "--data_dir": task.data_dir,
          "--cache_dir": task.cache_dir,
          "--init_checkpoint": task.init_checkpoint,
      },
  )


def seed_dir(model_dir: str, seed: int) -> str:
  return os.path.join(model_dir, f"seed_{seed}")


def best_seed_dir(model_dir: str) -> str:
  """The dev-best seed's directory when `model_dir` holds a `--seeds` run
  (and no checkpoint of its own), else `model_dir`."""
  path = os.path.join(model_dir, SEEDS_FILE)
  if tf.train.latest_checkpoint(model_dir) or not files.exists(path):
    return model_dir
  best = json.loads(files.read_text(path))["best_seed"]
  logging.info("%s: the best of its seeds is seed %d", model_dir, best)
  return seed_dir(model_dir, best)
