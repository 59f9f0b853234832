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

`--mode=eval` evaluates the latest checkpoint on
`PretrainTask.eval_file_pattern` without training (summaries under
`MODEL_DIR/--eval_name`); `--metrics_file` writes the final metrics as JSON.
"""

from typing import Sequence

from absl import flags

from albert import cli
from albert.pretraining.training import evaluate_pretrained
from albert.pretraining.training import pretrain
from albert.pretraining.training import write_metrics
from official.distribute import strategy as strategy_lib

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
MODE = flags.DEFINE_enum(
    "mode",
    "train",
    ["train", "eval"],
    "train (and evaluate), or only evaluate the latest checkpoint.",
)
EVAL_NAME = flags.DEFINE_string(
    "eval_name", "eval", "--mode=eval: summaries go to MODEL_DIR/EVAL_NAME."
)
INIT_CHECKPOINT = flags.DEFINE_string(
    "init_checkpoint",
    None,
    "Continued pretraining from this checkpoint or model directory, or a "
    "released model's name (albert-fetch --list) or hf://OWNER/REPO "
    "(PretrainTask.init_checkpoint).",
)
METRICS_FILE = flags.DEFINE_string(
    "metrics_file", None, "Write the final metrics and checkpoint as JSON."
)


def main(argv: Sequence[str]) -> None:
  cli.unexpected_arguments(argv)
  cli.require_flags("model_dir")
  gin_params = list(GIN_PARAMS.value)
  if INIT_CHECKPOINT.value:
    gin_params.append(
        f"PretrainTask.init_checkpoint = {INIT_CHECKPOINT.value!r}"
    )
  common = dict(
      model_dir=MODEL_DIR.value,
      gin_file=GIN_FILES.value,
      gin_param=gin_params,
      strategy=STRATEGY.value,
      tpu=TPU.value,
  )
  if MODE.value == "eval":
    results, checkpoint = evaluate_pretrained(
        summary_name=EVAL_NAME.value, **common
    )
  else:
    results, checkpoint = pretrain(**common)
  print("final " + " ".join(f"{k}={v:.4f}" for k, v in sorted(results.items())))
  print(f"checkpoint {checkpoint}")
  if METRICS_FILE.value:
    write_metrics(METRICS_FILE.value, results, checkpoint)


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
