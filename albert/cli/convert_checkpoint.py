r"""Converts ALBERT checkpoints: original TF1, Hugging Face, TF Hub, the Model
Garden's, keras-hub's and ours.

Into a model directory of ours (ckpt-N, model_config.json, albert_config.json,
operative_config.gin):

  python tools/convert_checkpoint.py --from=original \
      --checkpoint=albert_base/model.ckpt-best \
      --albert_config=albert_base/albert_config.json --output_dir=runs/base
  python tools/convert_checkpoint.py --from=huggingface \
      --checkpoint=hf/albert-base-v2 --output_dir=runs/base
  python tools/convert_checkpoint.py --from=tf_hub \
      --checkpoint=albert_en_base_3 --output_dir=runs/base
  python tools/convert_checkpoint.py --from=model_garden \
      --checkpoint=tf2/albert_base/ckpt-1 \
      --albert_config=tf2/albert_base/albert_config.json --output_dir=runs/base

Out of one (--checkpoint: the model directory, or a ckpt-N inside it):

  python tools/convert_checkpoint.py --to=original \
      --checkpoint=runs/base --output_dir=export/tf1
  python tools/convert_checkpoint.py --to=huggingface \
      --checkpoint=runs/base/ckpt-5000 --output_dir=export/hf
  python tools/convert_checkpoint.py --to=model_garden \
      --checkpoint=runs/base --output_dir=export/model_garden
  python tools/convert_checkpoint.py --to=keras_hub --checkpoint=runs/base \
      --spm_model_file=30k-clean.model --output_dir=export/keras_hub

--optimizer_slots (original format only) carries LAMB's moments and the
global step across as well, so `python -m albert.run_pretraining
--model_dir=runs/base` resumes from a released pretraining checkpoint.

Fine-tuned models: give the task's recipe and size, as to run_finetuning;
the head goes along (classification and regression, RACE, token
classification, SQuAD v1.1 both ways; the SQuAD v2.0 head to and from the
original only, transformers has no class for it):

  python tools/convert_checkpoint.py --to=huggingface --checkpoint=runs/mnli \
      --gin_file=gin/finetune/mnli.gin --gin_file=gin/base.gin \
      --output_dir=export/mnli_hf        # AlbertForSequenceClassification
  python tools/convert_checkpoint.py --from=original \
      --checkpoint=glue/MNLI/model.ckpt-best --gin_file=gin/finetune/mnli.gin \
      --output_dir=runs/mnli             # eval / predict / export it

Own-data recipes also take --data_dir (their labels come from the training
file) unless the model directory has its labels.json.
Errors are one line on stderr; the output directory is then not created.
See docs/checkpoint_conversion.md.
"""

import os

from absl import flags
from absl import logging

from albert import cli
from albert.finetuning import training as finetuning
from albert import model_dir as model_dir_lib
from albert.checkpoint_conversion import huggingface_names
from albert.checkpoint_conversion import safetensors_io
from albert.checkpoint_conversion import converter
from albert.checkpoint_conversion import finetuned_converter
from albert.checkpoint_conversion import keras_hub_preset
from albert.checkpoint_conversion import model_garden
from albert.checkpoint_conversion.errors import ConversionError
from official.core import checkpoints

FROM_FORMATS = (
    "original",
    "huggingface",
    "tf_hub",
    "model_garden",
    "keras_hub",
)
TO_FORMATS = ("original", "huggingface", "model_garden", "keras_hub")
# Formats whose fine-tuned heads convert too (--gin_file).
FINETUNED_FORMATS = ("original", "huggingface", "keras_hub")

FROM = flags.DEFINE_enum(
    "from",
    None,
    FROM_FORMATS,
    "Convert from this format into a model directory of ours.",
)
TO = flags.DEFINE_enum(
    "to",
    None,
    TO_FORMATS,
    "Convert a model directory of ours into this format.",
)
CHECKPOINT = flags.DEFINE_string(
    "checkpoint",
    None,
    "Input: the TF1 checkpoint prefix (--from=original), the transformers "
    "model directory (--from=huggingface), the SavedModel directory "
    "(--from=tf_hub), the object-based checkpoint prefix "
    "(--from=model_garden), the preset directory (--from=keras_hub), or our "
    "model directory or a ckpt-N in it (--to).",
)
ALBERT_CONFIG = flags.DEFINE_string(
    "albert_config",
    None,
    "--from=original|model_garden: the checkpoint's albert_config.json "
    "(default: the one beside the checkpoint); --from=tf_hub: only for a "
    "SavedModel that does not describe its architecture.",
)
OUTPUT_DIR = flags.DEFINE_string(
    "output_dir", None, "Directory to create; must not exist or be empty."
)
GIN_FILE = flags.DEFINE_multi_string(
    "gin_file",
    [],
    "A fine-tuned model: the task's recipe and size files (as for "
    "albert.run_finetuning); the head is converted with the encoder.",
)
GIN_PARAM = flags.DEFINE_multi_string(
    "gin_param", [], "Extra gin bindings (fine-tuned)."
)
DATA_DIR = flags.DEFINE_string(
    "data_dir",
    None,
    "Fine-tuned own-data models without labels.json: the data directory "
    "whose training file gives the labels.",
)
SPM_MODEL_FILE = flags.DEFINE_string(
    "spm_model_file",
    None,
    "--to=keras_hub: the model's SentencePiece model, written as the "
    "preset's tokenizer (fine-tuned: default the recipe's).",
)
OPTIMIZER_SLOTS = flags.DEFINE_bool(
    "optimizer_slots",
    False,
    "Original format only: also convert the adam_m/adam_v slots (LAMB's m "
    "and v) and global_step, to resume pretraining.",
)


def convert() -> str:
  """Runs the conversion the flags ask for; returns what was written."""
  source, target = FROM.value, TO.value
  if (source is None) == (target is None):
    raise ConversionError(
        f"give exactly one of --from={'|'.join(FROM_FORMATS)} "
        f"or --to={'|'.join(TO_FORMATS)}"
    )
  cli.require_flags("checkpoint", "output_dir")
  if ALBERT_CONFIG.value and source not in (
      "original",
      "model_garden",
      "tf_hub",
  ):
    raise ConversionError(
        "--albert_config is read with --from=original|model_garden|tf_hub "
        "only"
    )
  if OPTIMIZER_SLOTS.value and "original" not in (source, target):
    raise ConversionError(
        "--optimizer_slots needs the original format "
        "(Hugging Face checkpoints hold no optimizer state)"
    )
  if GIN_FILE.value:
    if (source or target) not in FINETUNED_FORMATS:
      raise ConversionError(
          f"fine-tuned models (--gin_file) convert to and from "
          f"{' and '.join(FINETUNED_FORMATS)} only; {source or target} "
          "holds pretrained encoders"
      )
    if OPTIMIZER_SLOTS.value:
      raise ConversionError(
          "--optimizer_slots converts pretraining checkpoints; a fine-tuned "
          "model (--gin_file) goes without its optimizer state"
      )
    return _convert_finetuned(source, target)
  common = dict(checkpoint=CHECKPOINT.value, output_dir=OUTPUT_DIR.value)
  if source == "original":
    return converter.from_original(
        albert_config=ALBERT_CONFIG.value,
        optimizer_slots=OPTIMIZER_SLOTS.value,
        **common,
    )
  if source == "huggingface":
    return converter.from_huggingface(**common)
  if source == "tf_hub":
    return model_garden.from_tf_hub(albert_config=ALBERT_CONFIG.value, **common)
  if source == "model_garden":
    return model_garden.from_model_garden(
        albert_config=ALBERT_CONFIG.value, **common
    )
  if source == "keras_hub":
    return keras_hub_preset.from_keras_hub(**common)
  if target == "model_garden":
    return model_garden.to_model_garden(**common)
  if target == "keras_hub":
    return keras_hub_preset.to_keras_hub(
        spm_model_file=SPM_MODEL_FILE.value, **common
    )
  if target == "original":
    return converter.to_original(
        optimizer_slots=OPTIMIZER_SLOTS.value, **common
    )
  return converter.to_huggingface(**common)


def _task(**kwargs):
  """The fine-tuning task of --gin_file / --gin_param."""
  return finetuning.build_task(
      gin_file=GIN_FILE.value,
      gin_param=GIN_PARAM.value,
      data_dir=DATA_DIR.value,
      **kwargs,
  )


def _convert_finetuned(source, target) -> str:
  """A fine-tuned model (the head of --gin_file's task) in either direction."""
  if target is not None:  # ours -> original / transformers / keras-hub
    model_dir, ckpt = model_dir_lib.split_checkpoint(CHECKPOINT.value)
    if ckpt is None:
      model_dir = finetuning.best_seed_dir(model_dir)
    task = _task()
    task.use_model_dir(model_dir)
    model, path = finetuning.trained_model(task, model_dir, ckpt)
    if target == "original":
      return finetuned_converter.finetuned_to_original(
          model,
          task.config,
          source=path,
          output_dir=OUTPUT_DIR.value,
          step=checkpoints.step_of(path),
      )
    if target == "keras_hub":
      return keras_hub_preset.finetuned_to_keras_hub(
          model,
          task.config,
          source=path,
          output_dir=OUTPUT_DIR.value,
          seq_length=task.seq_length,
          spm_model_file=SPM_MODEL_FILE.value or task.spm_model_file,
      )
    labels = getattr(task, "labels", None)
    return finetuned_converter.finetuned_to_huggingface(
        model,
        task.config,
        source=path,
        output_dir=OUTPUT_DIR.value,
        labels=None if getattr(task, "is_regression", False) else labels,
        problem_type=getattr(task, "problem_type", None),
    )
  # original / transformers / keras-hub -> a fine-tuning model directory
  if source == "original":
    config = converter.read_original_config(
        ALBERT_CONFIG.value, CHECKPOINT.value
    )
  elif source == "keras_hub":
    config = keras_hub_preset.read_backbone(CHECKPOINT.value)[0]
  else:
    config = huggingface_names.config_from_huggingface(
        safetensors_io.read_config(CHECKPOINT.value),
        source=os.path.join(CHECKPOINT.value, safetensors_io.CONFIG_FILE),
    )
  task = _task(model_config=config)
  task.require_model_facts(OUTPUT_DIR.value)
  model = task.build_model()
  step = 0
  if source == "original":
    step = finetuned_converter.finetuned_from_original(
        model, checkpoint=CHECKPOINT.value, config=config
    )
  elif source == "keras_hub":
    keras_hub_preset.finetuned_from_keras_hub(
        model, checkpoint=CHECKPOINT.value
    )
  else:
    finetuned_converter.finetuned_from_huggingface(
        model, checkpoint=CHECKPOINT.value
    )
  return finetuned_converter.write_finetuned_dir(
      OUTPUT_DIR.value,
      model,
      step=step,
      model_config=task.model_config_dict(),
      files=task.model_dir_files(),
  )


def main(argv):
  cli.unexpected_arguments(argv)
  logging.set_verbosity(logging.INFO)
  print(convert())


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
