"""`convert`: the one entry of every conversion, into a model directory of
ours from another format or out of one into another format, for pretrained
models and (with the task's recipe) fine-tuned ones.

Each format's module holds both directions: `original`, `huggingface`,
`model_garden` (with TF Hub SavedModels, in only), `keras_hub`. A fine-tuned
model directory is read with `albert.finetuning.training.load_trained`, as
prediction and export read it.
"""

from typing import Optional, Sequence

from albert.checkpoint_conversion import huggingface
from albert.checkpoint_conversion import keras_hub
from albert.checkpoint_conversion import model_garden
from albert.checkpoint_conversion import model_io
from albert.checkpoint_conversion import original
from albert.checkpoint_conversion import sentence_transformers
from albert.checkpoint_conversion.errors import ConversionError
from albert.finetuning import task_state
from albert.finetuning import training as finetuning
from albert import model_dir as model_dir_lib
from albert.registry import fetch as registry
from official.core import checkpoints

FROM_FORMATS = (
    "original",
    "huggingface",
    "tf_hub",
    "model_garden",
    "keras_hub",
    "sentence_transformers",
)
TO_FORMATS = (
    "original",
    "huggingface",
    "model_garden",
    "keras_hub",
    "sentence_transformers",
)
# Formats whose fine-tuned heads convert too (gin_file).
FINETUNED_FORMATS = ("original", "huggingface", "keras_hub")


def convert(
    *,
    source: Optional[str] = None,
    target: Optional[str] = None,
    checkpoint: Optional[str],
    output_dir: Optional[str],
    albert_config: Optional[str] = None,
    optimizer_slots: bool = False,
    spm_model_file: Optional[str] = None,
    gin_file: Sequence[str] = (),
    gin_param: Sequence[str] = (),
    data_dir: Optional[str] = None,
) -> str:
  """Converts `checkpoint` from format `source` into a model directory of
  ours, or a model directory of ours into format `target` (exactly one).

  Args:
    source: one of FROM_FORMATS.
    target: one of TO_FORMATS.
    checkpoint: the input (see tools/convert_checkpoint.py --checkpoint).
    output_dir: the directory to create (must not exist or be empty).
    albert_config: the checkpoint's albert_config.json (source original,
      model_garden or tf_hub); default the one beside it.
    optimizer_slots: also convert LAMB's moments and the step (original).
    spm_model_file: the SentencePiece model a keras-hub preset gets.
    gin_file, gin_param: a fine-tuned model: its task's recipe and size; the
      head converts with the encoder. Going out of a fine-tuned model
      directory, the recipe it recorded is the default.
    data_dir: fine-tuned own-data models without labels.json: the data
      whose training file gives the labels.

  Returns:
    What was written (a checkpoint prefix or the main file).

  Raises:
    ConversionError: one line, before anything is written.
  """
  if (source is None) == (target is None):
    raise ConversionError(
        f"give exactly one of --from={'|'.join(FROM_FORMATS)} "
        f"or --to={'|'.join(TO_FORMATS)}"
    )
  if albert_config and source not in ("original", "model_garden", "tf_hub"):
    raise ConversionError(
        "--albert_config is read with --from=original|model_garden|tf_hub "
        "only"
    )
  if optimizer_slots and "original" not in (source, target):
    raise ConversionError(
        "--optimizer_slots needs the original format "
        "(Hugging Face checkpoints hold no optimizer state)"
    )
  if target is not None:  # ours: a released model's name is fetched
    checkpoint = registry.resolve(checkpoint)
  finetuned = bool(gin_file) or (
      target is not None
      and bool(checkpoint)
      and finetuning.is_finetuned_dir(
          model_dir_lib.split_checkpoint(checkpoint)[0]
      )
  )
  if finetuned:
    embedder_out = target == "sentence_transformers"
    if (source or target) not in FINETUNED_FORMATS and not embedder_out:
      raise ConversionError(
          f"fine-tuned models (--gin_file) convert to and from "
          f"{' and '.join(FINETUNED_FORMATS)} only (a trained embedder also "
          f"to sentence_transformers); {source or target} holds pretrained "
          "encoders"
      )
    if optimizer_slots:
      raise ConversionError(
          "--optimizer_slots converts pretraining checkpoints; a fine-tuned "
          "model (--gin_file) goes without its optimizer state"
      )
    recipe = dict(gin_file=gin_file, gin_param=gin_param, data_dir=data_dir)
    if target is not None:
      return _finetuned_out(
          target, checkpoint, output_dir, spm_model_file, recipe
      )
    return _finetuned_in(source, checkpoint, output_dir, albert_config, recipe)
  common = dict(checkpoint=checkpoint, output_dir=output_dir)
  if source == "original":
    return original.from_original(
        albert_config=albert_config, optimizer_slots=optimizer_slots, **common
    )
  if source == "huggingface":
    return huggingface.from_huggingface(**common)
  if source == "tf_hub":
    return model_garden.from_tf_hub(albert_config=albert_config, **common)
  if source == "model_garden":
    return model_garden.from_model_garden(albert_config=albert_config, **common)
  if source == "keras_hub":
    return keras_hub.from_keras_hub(**common)
  if source == "sentence_transformers":
    return sentence_transformers.from_sentence_transformers(**common)
  if target == "sentence_transformers":
    return sentence_transformers.to_sentence_transformers(**common)
  if target == "model_garden":
    return model_garden.to_model_garden(**common)
  if target == "keras_hub":
    return keras_hub.to_keras_hub(spm_model_file=spm_model_file, **common)
  if target == "original":
    return original.to_original(optimizer_slots=optimizer_slots, **common)
  return huggingface.to_huggingface(**common)


def _finetuned_out(target, checkpoint, output_dir, spm_model_file, recipe):
  """Our fine-tuned model directory -> original / transformers / keras-hub
  (a trained embedder: -> sentence-transformers)."""
  model_dir, ckpt = model_dir_lib.split_checkpoint(checkpoint)
  task, model, path = finetuning.load_trained(
      model_dir=model_dir, checkpoint=ckpt, **recipe
  )
  if target == "original":
    return original.finetuned_to_original(
        model,
        task.config,
        source=path,
        output_dir=output_dir,
        step=checkpoints.step_of(path),
    )
  if target == "sentence_transformers":  # a trained embedder
    return sentence_transformers.finetuned_to_sentence_transformers(
        task, model, output_dir
    )
  if target == "keras_hub":
    return keras_hub.finetuned_to_keras_hub(
        model,
        task.config,
        source=path,
        output_dir=output_dir,
        seq_length=task.seq_length,
        spm_model_file=spm_model_file or task.spm_model_file,
    )
  labels = getattr(task, "labels", None)
  return huggingface.finetuned_to_huggingface(
      model,
      task.config,
      source=path,
      output_dir=output_dir,
      labels=None if getattr(task, "is_regression", False) else labels,
      problem_type=getattr(task, "problem_type", None),
  )


def _finetuned_in(source, checkpoint, output_dir, albert_config, recipe):
  """Original / transformers / keras-hub -> a fine-tuning model directory."""
  if source == "original":
    config = original.read_original_config(albert_config, checkpoint)
  elif source == "keras_hub":
    config = keras_hub.read_backbone(checkpoint)[0]
  else:
    config = huggingface.read_config(checkpoint)
  task = finetuning.build_task(model_config=config, **recipe)
  task.use_state(task_state.TaskState(output_dir, for_model=True))
  model = task.build_model()
  step = 0
  if source == "original":
    step = original.finetuned_from_original(
        model, checkpoint=checkpoint, config=config
    )
  elif source == "keras_hub":
    keras_hub.finetuned_from_keras_hub(model, checkpoint=checkpoint)
  else:
    huggingface.finetuned_from_huggingface(model, checkpoint=checkpoint)
  return model_io.write_finetuned_dir(
      output_dir,
      model,
      step=step,
      model_config=task.model_config_dict(),
      files=task_state.files_of(task),
  )
