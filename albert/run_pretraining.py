r"""ALBERT pretraining: `python -m albert.run_pretraining`.

  python -m albert.run_pretraining \
      --gin_file=gin/large.gin \
      --gin_param="PretrainTask.train_file_pattern='data/train-*.tfrecord'" \
      --gin_param="PretrainTask.eval_file_pattern='data/eval-*.tfrecord'" \
      --model_dir=runs/large --strategy=mirrored

`gin/pretrain.gin` (the paper's recipe) is loaded first; `--gin_file`s and
`--gin_param`s are layered on top in order. The operative config is written to
`MODEL_DIR/operative_config.gin`. Rerunning the same command resumes from the
latest checkpoint in `--model_dir`.
"""

import sys
from typing import Dict, Sequence, Tuple

from absl import app
from absl import flags
from absl import logging

from albert import cli
from albert import REPO_ROOT
from albert import model_dir as model_dir_lib
from albert.pretrain_task import PretrainTask
from official.config import gin_files
from official.core.trainer import NonFiniteLossError, Trainer
from official.core.trainer_config import TrainerConfig
from official.distribute import strategy as strategy_lib
from official.optimization.optimizer_config import OptimizerConfig

DEFAULT_GIN = "gin/pretrain.gin"

GIN_FILES = flags.DEFINE_multi_string(
    "gin_file", [], "Gin files layered after gin/pretrain.gin, in order."
)
GIN_PARAMS = flags.DEFINE_multi_string(
    "gin_param",
    [],
    "Gin bindings applied last, e.g. "
    "\"PretrainTask.train_file_pattern='data/*.tfrecord'\".",
)
MODEL_DIR = flags.DEFINE_string(
    "model_dir", None, "Checkpoints, summaries and configs go here."
)
STRATEGY = flags.DEFINE_enum(
    "strategy", "default", strategy_lib.STRATEGY_NAMES, "Distribution strategy."
)
TPU = flags.DEFINE_string(
    "tpu", None, "TPU name, grpc://HOST:PORT or 'local' (--strategy=tpu)."
)


def pretrain(
    *,
    model_dir: str,
    gin_file: Sequence[str] = (),
    gin_param: Sequence[str] = (),
    strategy: str = "default",
    tpu: str = None,
) -> Tuple[Dict[str, float], str]:
  """Parses the configuration, builds the task and trains.

  Returns:
    (final eval metrics, or train metrics without eval data; the checkpoint).
  """
  gin_files.parse_gin(
      [DEFAULT_GIN, *gin_file], gin_param, search_paths=[REPO_ROOT]
  )
  task = PretrainTask()
  trainer_config = TrainerConfig()
  optimizer_config = OptimizerConfig()
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
  if trainer.is_chief:
    logging.info(
        "Operative config: %s", model_dir_lib.write_operative_config(model_dir)
    )
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
  return trainer.train(), trainer.latest_checkpoint()


def main(argv: Sequence[str]) -> None:
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
  if not MODEL_DIR.value:
    sys.exit("run_pretraining: --model_dir is required (where checkpoints go)")
  try:
    results, checkpoint = pretrain(
        model_dir=MODEL_DIR.value,
        gin_file=GIN_FILES.value,
        gin_param=GIN_PARAMS.value,
        strategy=STRATEGY.value,
        tpu=TPU.value,
    )
  except (ValueError, RuntimeError, NonFiniteLossError) as e:
    sys.exit(f"run_pretraining: {str(e).strip().splitlines()[0]}")
  print("final " + " ".join(f"{k}={v:.4f}" for k, v in sorted(results.items())))
  print(f"checkpoint {checkpoint}")


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
