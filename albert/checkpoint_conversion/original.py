"""The original TF1 release's checkpoints (google-research/albert) <-> ours,
for pretrained models (with LAMB's moments and the step, on request) and
fine-tuned ones (the encoder and the head of the task's kind).

  from_original            TF1 checkpoint + albert_config.json -> model dir
  to_original              model dir -> TF1 checkpoint + albert_config.json
  finetuned_from_original  TF1 fine-tuned checkpoint -> a built fine-tuned model
  finetuned_to_original    a fine-tuned model -> TF1 checkpoint

Every tensor is checked for name and shape on the way (`original_names`).
"""

import os
from typing import Optional

from absl import logging
import numpy as np
import tensorflow as tf

from albert import model_dir as model_dir_lib
from albert.checkpoint_conversion import finetuned_names
from albert.checkpoint_conversion import model_io
from albert.checkpoint_conversion import original_checkpoint
from albert.checkpoint_conversion import original_names
from albert.checkpoint_conversion.errors import ConversionError
from albert.checkpoint_conversion.name_table import NameTable
from albert.modeling.config import AlbertConfig
from albert.modeling.pretrainer import AlbertPretrainer
from albert.modeling.weight_names import pretrainer_weights
from official.core import checkpoint_damage
from official.core import checkpoints
from official.errors import first_line
from official.optimization.optimizer_config import OptimizerConfig


def from_original(
    *,
    checkpoint: str,
    albert_config: Optional[str],
    output_dir: str,
    optimizer_slots: bool = False,
) -> str:
  """Converts an original TF1 checkpoint into a model directory.

  Args:
    checkpoint: the checkpoint prefix (`DIR/model.ckpt-best`) or directory.
    albert_config: its `albert_config.json`; None: the one beside it.
    output_dir: the model directory to create (must not exist or be empty).
    optimizer_slots: also convert `<var>/adam_m`, `<var>/adam_v` into LAMB's
      m and v and `global_step` into its iterations, so that
      `albert.run_pretraining --model_dir=OUTPUT_DIR` resumes from them.

  Returns:
    The checkpoint prefix written (`OUTPUT_DIR/ckpt-N`, N = global_step).
  """
  model_io.check_output_dir(output_dir)
  tensors, prefix = original_checkpoint.read_checkpoint(checkpoint)
  original_names.check_layout(tensors, prefix)
  config = read_original_config(albert_config, checkpoint)
  step = tensors.pop(original_names.GLOBAL_STEP, None)
  slots = {
      suffix: {n: tensors.pop(n) for n in sorted(tensors) if n.endswith(suffix)}
      for suffix in original_names.SLOT_SUFFIXES
  }
  num_slots = sum(len(s) for s in slots.values())
  table = original_names.name_table(config)
  pretrainer, weights = model_io.build(config, table)
  shapes = {n: tuple(v.shape) for n, v in weights.items()}
  model_io.assign(weights, table.to_ours(tensors, shapes, source=prefix))
  logging.info("%s: %d weights read", prefix, len(table))
  optimizer = None
  if optimizer_slots:
    optimizer = _optimizer_from_slots(
        pretrainer, weights, table, slots, step, source=prefix
    )
  elif num_slots:
    logging.info(
        "%s: %d optimizer slots ignored (--optimizer_slots converts them)",
        prefix,
        num_slots,
    )
  with model_io.staged(output_dir) as staging:
    path = model_dir_lib.write_model_dir(
        staging,
        pretrainer,
        optimizer=optimizer,
        step=0 if step is None else int(step),
    )
    model_io.copy_tokenizer_files(os.path.dirname(prefix), staging)
  return os.path.join(output_dir, os.path.basename(path))


def to_original(
    *, checkpoint: str, output_dir: str, optimizer_slots: bool = False
) -> str:
  """Writes a model directory's checkpoint as an original TF1 checkpoint.

  Args:
    checkpoint: a model directory (its latest checkpoint) or a `ckpt-N`
      prefix inside one.
    output_dir: gets `model.ckpt-N.{index,data-*}`, `checkpoint` and
      `albert_config.json` (must not exist or be empty).
    optimizer_slots: also write LAMB's m and v as `<var>/adam_m`,
      `<var>/adam_v` (the checkpoint must hold optimizer state).

  Returns:
    The checkpoint prefix written.
  """
  model_io.check_output_dir(output_dir)
  pretrainer, config, path = model_io.load_model(checkpoint)
  original_names.check_config(config, path)
  table = original_names.name_table(config)
  weights = pretrainer_weights(pretrainer)
  tensors = table.to_external({n: v.numpy() for n, v in weights.items()})
  optimizer = _restore_optimizer(pretrainer, path)
  if optimizer is not None:
    step = int(optimizer.iterations.numpy())
  else:
    step = checkpoints.step_of(path)
  if optimizer_slots:
    if optimizer is None:
      raise ConversionError(
          f"{path} holds no optimizer state; convert "
          "without --optimizer_slots"
      )
    for suffix, kind in original_names.SLOT_SUFFIXES.items():
      slots = {
          n: optimizer.slots(v)[0 if kind == "m" else 1].numpy()
          for n, v in weights.items()
      }
      tensors.update(table.with_suffix(suffix).to_external(slots))
  return write_original(output_dir, config, tensors, step)


def write_original(output_dir, config, tensors, step: int) -> str:
  """`model.ckpt-{step}` (with global_step) and albert_config.json, staged."""
  tensors[original_names.GLOBAL_STEP] = np.asarray(step, np.int64)
  config = config.replace(
      hidden_act=original_names.ACTIVATIONS[config.hidden_act]
  )
  with model_io.staged(output_dir) as staging:
    prefix = original_checkpoint.write_checkpoint(
        staging, f"model.ckpt-{step}", tensors
    )
    config.to_json_file(os.path.join(staging, model_dir_lib.ALBERT_CONFIG_FILE))
  logging.info("%s: %d tensors written", prefix, len(tensors))
  return os.path.join(output_dir, os.path.basename(prefix))


def read_original_config(path: Optional[str], checkpoint: str) -> AlbertConfig:
  """`read_config_file`, checked for what the original code can hold."""
  config, path = model_io.config_and_path(path, checkpoint)
  original_names.check_config(config, path)
  return config


def _optimizer_from_slots(
    pretrainer, weights, table, slots, step, *, source: str
):
  """A LAMB whose m, v and iterations are the original slots and step.

  Args:
    slots: slot suffix (`/adam_m`, `/adam_v`) -> original name -> array.
    step: the original `global_step` (None if absent).
  """
  if not any(slots.values()):
    raise ConversionError(
        f"{source} holds no optimizer slots (*/adam_m, "
        "*/adam_v); convert without --optimizer_slots"
    )
  if step is None:
    raise ConversionError(
        f"{source} holds no global_step; the optimizer "
        "state cannot be resumed without its step"
    )
  optimizer = _new_optimizer(pretrainer)
  shapes = {n: tuple(v.shape) for n, v in weights.items()}
  for suffix, kind in original_names.SLOT_SUFFIXES.items():
    arrays = table.with_suffix(suffix).to_ours(
        slots[suffix], shapes, source=source
    )
    for name, array in arrays.items():
      m, v = optimizer.slots(weights[name])
      (m if kind == "m" else v).assign(array)
  optimizer.iterations.assign(int(step))
  logging.info("%s: optimizer slots read, step %d", source, int(step))
  return optimizer


def _new_optimizer(pretrainer: AlbertPretrainer):
  """A LAMB built as the trainer builds it, so that its slots line up."""
  optimizer = OptimizerConfig(name="lamb").build()
  optimizer.build(pretrainer.trainable_variables)
  return optimizer


def _restore_optimizer(pretrainer: AlbertPretrainer, path: str):
  """The optimizer state saved in `path`, or None if it holds none."""
  names = tf.train.load_checkpoint(path).get_variable_to_shape_map()
  if not any(n.startswith("optimizer/") for n in names):
    return None
  optimizer = _new_optimizer(pretrainer)
  try:
    status = tf.train.Checkpoint(optimizer=optimizer).restore(path)
    status.assert_existing_objects_matched()
  except (tf.errors.OpError, IndexError, ValueError) as e:
    checkpoint_damage.raise_if_damaged(path, e)
    raise
  except AssertionError as e:
    raise ConversionError(
        f"{path}: its optimizer state is not LAMB/AdamW state of this model "
        f"(mixed_float16 loss scaling?): {first_line(e)}"
    ) from e
  status.expect_partial()
  return optimizer


def _original_finetuned_table(config: AlbertConfig, kind: str):
  entries = model_io.encoder_part(original_names.name_table(config), ("cls/",))
  return NameTable(
      entries + finetuned_names.original_head(kind),
      format_name=original_names.FORMAT_NAME,
  )


def finetuned_to_original(
    model, config: AlbertConfig, *, source: str, output_dir: str, step: int
) -> str:
  """Writes a fine-tuned model (restored from `source`) as an original TF1
  checkpoint: the encoder's names and the head's (`finetuned_names`)."""
  model_io.check_output_dir(output_dir)
  original_names.check_config(config, source)
  kind = finetuned_names.head_kind(model)
  table = _original_finetuned_table(config, kind)
  weights = finetuned_names.finetuned_weights(model)
  tensors = table.to_external({n: v.numpy() for n, v in weights.items()})
  logging.info("%s head of %s", kind, source)
  return write_original(output_dir, config, tensors, step)


def finetuned_from_original(model, *, checkpoint: str, config: AlbertConfig):
  """Fills a built fine-tuned model from an original TF1 fine-tuned
  checkpoint (the encoder and the head of its kind); returns its step."""
  tensors, prefix = original_checkpoint.read_checkpoint(checkpoint)
  step = tensors.pop(original_names.GLOBAL_STEP, None)
  for name in [n for n in tensors if n.endswith(("adam_m", "adam_v"))]:
    del tensors[name]  # a fine-tuning run's optimizer state is not kept
  kind = finetuned_names.head_kind(model)
  table = _original_finetuned_table(config, kind)
  weights = finetuned_names.finetuned_weights(model)
  shapes = {n: tuple(v.shape) for n, v in weights.items()}
  model_io.assign(weights, table.to_ours(tensors, shapes, source=prefix))
  logging.info("%s: %s head, %d weights read", prefix, kind, len(table))
  return 0 if step is None else int(step)
