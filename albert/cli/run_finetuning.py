r"""Fine-tuning: `python -m albert.run_finetuning`.

  python -m albert.run_finetuning \
      --gin_file=gin/finetune/mnli.gin --gin_file=gin/base.gin \
      --init_checkpoint=runs/base --spm_model_file=data/spm.model \
      --data_dir=glue/ --model_dir=runs/mnli --mode=train_and_eval

`gin/finetune/finetune.gin` (AdamW, linear warmup and decay) is loaded first;
the task recipe and the model size are layered on top. Modes:

  train           train from --init_checkpoint's encoder (fresh heads); a
                  rerun resumes from the latest checkpoint in --model_dir
  train_and_eval  train with the original's dev protocol: evaluate on dev
                  every EVAL_INTERVAL steps (100 for GLUE, RACE and own
                  data; 1000 for SQuAD) and at the end, keep the best
                  checkpoint in MODEL_DIR/best, report it
  eval            evaluate --checkpoint (default: the best, else the latest;
                  `all`: every kept checkpoint, reporting the best)
  predict         write prediction / submission files for the test splits
  export          write a raw-text serving SavedModel to --export_dir
                  (--export_format=onnx: EXPORT_DIR/model.onnx, token ids in;
                  --quantize=int8: its matrix products in int8)

--freeze_encoder trains the head alone on the encoder's fixed features (a
fast baseline; the encoder's weights stay --init_checkpoint's).

--seeds=1,2,3 (with train_and_eval) fine-tunes once per seed into
MODEL_DIR/seed_N and keeps the dev-best run (MODEL_DIR/seeds.json has every
seed's metrics); eval, predict and export on MODEL_DIR then use that run.

eval, predict and export read the dev-best checkpoint unless --checkpoint
says otherwise (`latest`, or a ckpt-N prefix). Every evaluation during
training is a line of MODEL_DIR/eval_history.jsonl and a TensorBoard point
(MODEL_DIR/eval); --early_stopping_patience=N stops after N evaluations
without improvement. The best checkpoint's metrics and step go to
MODEL_DIR/eval_results.json, predictions to --output_dir (default
MODEL_DIR/predictions).
"""

from typing import Sequence

from absl import flags

from albert import cli
from albert.finetuning import training as finetuning
from albert import seeds as seeds_lib
from official.errors import InputError
from official.distribute import strategy as strategy_lib

GIN_FILES = flags.DEFINE_multi_string(
    "gin_file",
    [],
    "Gin files layered after gin/finetune/finetune.gin: a "
    "task recipe (gin/finetune/*.gin) and a size (gin/base.gin, ...).",
)
GIN_PARAMS = flags.DEFINE_multi_string(
    "gin_param", [], "Gin bindings applied last."
)
MODE = flags.DEFINE_enum(
    "mode", "train_and_eval", finetuning.MODES, "What to run."
)
INIT_CHECKPOINT = flags.DEFINE_string(
    "init_checkpoint",
    None,
    "Pretrained checkpoint prefix or model directory, or a released model's "
    "name (albert-fetch --list) or hf://OWNER/REPO; only its encoder is "
    "restored.",
)
SPM_MODEL_FILE = flags.DEFINE_string(
    "spm_model_file", None, "The SentencePiece model of pretraining."
)
VOCAB_FILE = flags.DEFINE_string(
    "vocab_file",
    None,
    "Without --spm_model_file: the WordPiece vocab.txt of pretraining (the "
    "Chinese ALBERTs').",
)
DATA_DIR = flags.DEFINE_string(
    "data_dir", None, "The task's files, as downloaded."
)
MODEL_DIR = flags.DEFINE_string(
    "model_dir", None, "Checkpoints, summaries, metrics go here."
)
CHECKPOINT = flags.DEFINE_string(
    "checkpoint",
    None,
    "eval/predict/export: `best` (the default: the dev-best checkpoint of "
    "train_and_eval, else the latest), `latest`, or a ckpt-N prefix; eval: "
    "`all` evaluates every kept checkpoint and reports the best.",
)
OUTPUT_DIR = flags.DEFINE_string(
    "output_dir", None, "predict: where files go (MODEL_DIR/predictions)."
)
EXPORT_DIR = flags.DEFINE_string(
    "export_dir", None, "export: the new SavedModel directory."
)
EXPORT_FORMAT = flags.DEFINE_enum(
    "export_format",
    "saved_model",
    ["saved_model", "onnx"],
    "export: a raw-text serving SavedModel, or EXPORT_DIR/model.onnx (token "
    "ids in, logits out; sequence and token classification, regression).",
)
QUANTIZE = flags.DEFINE_enum(
    "quantize",
    "none",
    ["none", "int8"],
    "export with --export_format=onnx: int8 writes the matrix products "
    "dynamically quantised to int8 (each shared weight once; needs "
    "onnxruntime).",
)
CACHE_DIR = flags.DEFINE_string(
    "cache_dir", None, "Converted features (default DATA_DIR/cache)."
)
STRATEGY = flags.DEFINE_enum(
    "strategy",
    "default",
    strategy_lib.STRATEGY_NAMES,
    "Distribution strategy for training.",
)
TPU = flags.DEFINE_string("tpu", None, "TPU address (--strategy=tpu).")
SEEDS = flags.DEFINE_list(
    "seeds",
    None,
    "train_and_eval once per seed (e.g. 1,2,3) into MODEL_DIR/seed_N; the "
    "dev-best run is kept and reported with every seed's score.",
)
EARLY_STOPPING_PATIENCE = flags.DEFINE_integer(
    "early_stopping_patience",
    None,
    "train_and_eval: stop after N dev evaluations in a row without "
    "improvement (TrainerConfig.early_stopping_patience; default 0, never).",
    lower_bound=0,
)
FREEZE_ENCODER = flags.DEFINE_bool(
    "freeze_encoder",
    None,
    "Train the head alone on the encoder's fixed features: the encoder keeps "
    "--init_checkpoint's weights (no gradients or optimizer slots for them) "
    "and runs without dropout (the task's freeze_encoder).",
)
KEEP_ALL_SEEDS = flags.DEFINE_bool(
    "keep_all_seeds",
    False,
    "--seeds: keep every run's checkpoints, not only the best one's.",
)


def main(argv: Sequence[str]) -> None:
  cli.unexpected_arguments(argv)
  cli.require_flags("model_dir")
  # Only flags that were given, so gin bindings of the same names still apply.
  task_flags = {
      name: flag.value
      for name, flag in (
          ("data_dir", DATA_DIR),
          ("spm_model_file", SPM_MODEL_FILE),
          ("vocab_file", VOCAB_FILE),
          ("cache_dir", CACHE_DIR),
          ("freeze_encoder", FREEZE_ENCODER),
      )
      if flag.value is not None
  }
  gin_params = list(GIN_PARAMS.value)
  if EARLY_STOPPING_PATIENCE.value is not None:
    gin_params.append(
        "TrainerConfig.early_stopping_patience = "
        f"{EARLY_STOPPING_PATIENCE.value}"
    )
  common = dict(
      mode=MODE.value,
      model_dir=MODEL_DIR.value,
      gin_file=GIN_FILES.value,
      gin_param=gin_params,
      init_checkpoint=INIT_CHECKPOINT.value,
      strategy=STRATEGY.value,
      tpu=TPU.value,
      **task_flags,
  )
  if SEEDS.value:
    try:
      seeds = [int(s) for s in SEEDS.value]
    except ValueError:
      raise InputError(
          f"--seeds={','.join(SEEDS.value)}: list integers, e.g. --seeds=1,2,3"
      ) from None
    results = seeds_lib.run_seeds(
        seeds, keep_all_seeds=KEEP_ALL_SEEDS.value, **common
    )
  else:
    results = finetuning.run(
        checkpoint=CHECKPOINT.value,
        output_dir=OUTPUT_DIR.value,
        export_dir=EXPORT_DIR.value,
        export_format=EXPORT_FORMAT.value,
        quantize=QUANTIZE.value,
        **common,
    )
  for key, value in sorted(results.items()):
    print(f"{key} = {value:.4f}")


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
