"""The conversions between our model directories and the original / HF formats.

  from_original     original TF1 checkpoint + albert_config.json -> model dir
  from_huggingface  transformers model directory                 -> model dir
  to_original       model dir -> TF1 checkpoint + albert_config.json
  to_huggingface    model dir -> config.json + model.safetensors

Every tensor is checked for name and shape on the way in (`NameTable`), and
every output is written into a temporary sibling directory that is renamed
into place only when complete: a failed conversion leaves nothing behind.
"""

import contextlib
import glob
import os
import shutil
import tempfile
from typing import Dict, Optional, Tuple

from absl import logging
import numpy as np
import tensorflow as tf

from albert import model_dir as model_dir_lib
from albert.checkpoint_conversion import huggingface_names
from albert.checkpoint_conversion import original_checkpoint
from albert.checkpoint_conversion import original_names
from albert.checkpoint_conversion import safetensors_io
from albert.checkpoint_conversion.errors import ConversionError
from albert.modeling.weight_names import pretrainer_weights
from albert.modeling.config import AlbertConfig
from albert.modeling.pretrainer import AlbertPretrainer
from official.core import checkpoint_damage
from official.core import checkpoints
from official.io import atomic_write
from official.errors import first_line
from official.optimization.optimizer_config import OptimizerConfig


# --- Into a model directory of ours ------------------------------------------


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
  check_output_dir(output_dir)
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
  pretrainer, weights = _build(config, table)
  shapes = {n: tuple(v.shape) for n, v in weights.items()}
  assign(weights, table.to_ours(tensors, shapes, source=prefix))
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
  with staged(output_dir) as staging:
    path = model_dir_lib.write_model_dir(
        staging,
        pretrainer,
        optimizer=optimizer,
        step=0 if step is None else int(step),
    )
    copy_tokenizer_files(os.path.dirname(prefix), staging)
  return os.path.join(output_dir, os.path.basename(path))


# What released tarballs keep beside the checkpoint: the English models'
# SentencePiece model, the Chinese models' WordPiece vocabulary.
TOKENIZER_FILES = ("*.model", "vocab*.txt")


def copy_tokenizer_files(folder: str, output_dir: str) -> None:
  """Copies the tokenizer files beside a released checkpoint along, for
  fine-tuning and export (`--spm_model_file` / `--vocab_file`)."""
  for pattern in TOKENIZER_FILES:
    for path in sorted(glob.glob(os.path.join(glob.escape(folder), pattern))):
      shutil.copy(path, os.path.join(output_dir, os.path.basename(path)))
      logging.info("Copied %s", path)


def from_huggingface(*, checkpoint: str, output_dir: str) -> str:
  """Converts a transformers ALBERT model directory into a model directory.

  Args:
    checkpoint: the directory with `config.json` and `model.safetensors` (or
      `pytorch_model.bin`, read only when torch is installed).
    output_dir: the model directory to create (must not exist or be empty).

  Returns:
    The checkpoint prefix written (`OUTPUT_DIR/ckpt-0`).
  """
  check_output_dir(output_dir)
  tensors, path = safetensors_io.read_weights(checkpoint)
  config = huggingface_names.config_from_huggingface(
      safetensors_io.read_config(checkpoint),
      source=os.path.join(checkpoint, safetensors_io.CONFIG_FILE),
  )
  tensors = huggingface_names.split_aliases(tensors, source=path)
  tensors = huggingface_names.drop_identity_projection(
      tensors, config, source=path
  )
  table = huggingface_names.name_table(config)
  absent = huggingface_names.absent_heads(tensors)
  return write_imported(
      config,
      table,
      tensors,
      source=path,
      output_dir=output_dir,
      may_lack=huggingface_names.head_names(absent),
      absent=absent,
      note="not an AlbertForPreTraining",
  )


def write_imported(
    config: AlbertConfig,
    table,
    tensors: Dict[str, np.ndarray],
    *,
    source: str,
    output_dir: str,
    may_lack=(),
    absent=(),
    uncovered=(),
    note: str = "",
) -> str:
  """Another format's weights -> a new model directory (`ckpt-0`).

  Args:
    config: the model's config.
    table: the format's `NameTable`; every tensor is checked against it.
    tensors: external name -> array.
    source: the file or directory read, for messages.
    output_dir: the model directory to create (must not exist or be empty).
    may_lack: external names the tensors need not hold.
    absent: the heads (as the format names them, or described) that are
      missing; kept freshly initialised, with a warning.
    uncovered: our names the format has no place for at all (the table
      does not name them); kept freshly initialised.
    note: what the absence says about the input, for the warning.

  Returns:
    The checkpoint prefix written (`OUTPUT_DIR/ckpt-0`).
  """
  pretrainer, weights = _build(config, table, uncovered)
  shapes = {n: tuple(v.shape) for n, v in weights.items()}
  arrays = table.to_ours(tensors, shapes, source=source, may_lack=may_lack)
  assign(weights, arrays)
  if absent:
    logging.warning(
        "%s holds no %s%s: kept freshly initialised; fine-tune before "
        "relying on them",
        source,
        " or ".join(absent),
        f" ({note})" if note else "",
    )
  logging.info("%s: %d weights read", source, len(arrays))
  with staged(output_dir) as staging:
    written = model_dir_lib.write_model_dir(staging, pretrainer, step=0)
  return os.path.join(output_dir, os.path.basename(written))


# --- Out of a model directory of ours ----------------------------------------


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
  check_output_dir(output_dir)
  pretrainer, config, path = load_model(checkpoint)
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
  with staged(output_dir) as staging:
    prefix = original_checkpoint.write_checkpoint(
        staging, f"model.ckpt-{step}", tensors
    )
    config.to_json_file(os.path.join(staging, model_dir_lib.ALBERT_CONFIG_FILE))
  logging.info("%s: %d tensors written", prefix, len(tensors))
  return os.path.join(output_dir, os.path.basename(prefix))


def to_huggingface(*, checkpoint: str, output_dir: str) -> str:
  """Writes a model directory's checkpoint as a transformers model directory.

  Args:
    checkpoint: a model directory (its latest checkpoint) or a `ckpt-N`
      prefix inside one.
    output_dir: gets `config.json` and `model.safetensors`, which
      `transformers.AlbertForPreTraining.from_pretrained` loads.

  Returns:
    The safetensors file written.
  """
  check_output_dir(output_dir)
  pretrainer, config, path = load_model(checkpoint)
  data = huggingface_names.config_to_huggingface(config, what=path)
  table = huggingface_names.name_table(config)
  weights = pretrainer_weights(pretrainer)
  tensors = table.to_external({n: v.numpy() for n, v in weights.items()})
  tensors.update(huggingface_names.projection_identity(config))
  with staged(output_dir) as staging:
    safetensors_io.write_weights(staging, tensors)
    safetensors_io.write_config(staging, data)
  logging.info("%s: %d tensors written", output_dir, len(tensors))
  return os.path.join(output_dir, safetensors_io.SAFETENSORS_FILE)


# --- Helpers -----------------------------------------------------------------


def read_original_config(path: Optional[str], checkpoint: str) -> AlbertConfig:
  """`read_config_file`, checked for what the original code can hold."""
  config, path = _config_and_path(path, checkpoint)
  original_names.check_config(config, path)
  return config


def read_config_file(path: Optional[str], checkpoint: str) -> AlbertConfig:
  """`path`, else the albert_config.json beside the checkpoint (as released)."""
  return _config_and_path(path, checkpoint)[0]


def _config_and_path(path, checkpoint) -> Tuple[AlbertConfig, str]:
  if not path:
    folder = (
        checkpoint if os.path.isdir(checkpoint) else os.path.dirname(checkpoint)
    )
    path = os.path.join(folder, model_dir_lib.ALBERT_CONFIG_FILE)
    if not os.path.isfile(path):
      raise ConversionError(
          f"no albert_config.json beside --checkpoint={checkpoint}; give "
          "--albert_config=PATH (the config released with the checkpoint)"
      )
    logging.info("Using %s", path)
  if not os.path.isfile(path):
    raise ConversionError(
        f"--albert_config={path} not found; give the "
        "albert_config.json released with the checkpoint"
    )
  try:
    return AlbertConfig.from_json_file(path), path
  except ValueError as e:
    raise ConversionError(first_line(e)) from e


def _build(
    config: AlbertConfig, table, uncovered=()
) -> Tuple[AlbertPretrainer, Dict[str, tf.Variable]]:
  """The model of `config` and its weights by our name, without `uncovered`
  (weights the format has no place for)."""
  pretrainer = AlbertPretrainer.from_config_object(config)
  weights = pretrainer_weights(pretrainer)
  for name in uncovered:
    del weights[name]
  table.check_covers(weights)
  return pretrainer, weights


def assign(
    weights: Dict[str, tf.Variable], arrays: Dict[str, np.ndarray]
) -> None:
  for name, array in arrays.items():
    weights[name].assign(array)


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


def load_model(checkpoint: str) -> Tuple[AlbertPretrainer, AlbertConfig, str]:
  """(pretrainer, config, checkpoint prefix) of a model dir or a ckpt in one."""
  model_dir, ckpt = model_dir_lib.split_checkpoint(checkpoint)
  try:
    pretrainer, config = model_dir_lib.load_pretrainer(model_dir, ckpt)
    path = model_dir_lib.checkpoint_path(model_dir, ckpt)
  except ValueError as e:
    raise ConversionError(first_line(e)) from e
  return pretrainer, config, path


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


def check_output_dir(output_dir: str) -> None:
  if not output_dir:
    raise ConversionError("--output_dir is required")
  if "://" in str(output_dir):  # the formats' own writers are local
    raise ConversionError(
        f"--output_dir={output_dir}: the converter writes a local directory; "
        "convert to one, then copy it (e.g. gsutil -m cp -r DIR gs://...)"
    )
  if os.path.exists(output_dir) and not (
      os.path.isdir(output_dir) and not os.listdir(output_dir)
  ):
    raise ConversionError(
        f"--output_dir={output_dir} already exists and is "
        "not an empty directory; choose a new one"
    )


@contextlib.contextmanager
def staged(output_dir: str):
  """Yields a temporary sibling of `output_dir`, renamed to it on success and
  removed on failure."""
  check_output_dir(output_dir)
  output_dir = os.path.abspath(output_dir)
  parent = os.path.dirname(output_dir)
  os.makedirs(parent, exist_ok=True)
  staging = tempfile.mkdtemp(
      prefix=f".{os.path.basename(output_dir)}.partial-", dir=parent
  )
  try:
    yield staging
    atomic_write.chmod_as_created(staging, directory=True)  # mkdtemp: 0700
    if os.path.isdir(output_dir):
      os.rmdir(output_dir)  # empty, checked above
    os.rename(staging, output_dir)
  except BaseException:
    shutil.rmtree(staging, ignore_errors=True)
    raise
  logging.info("Wrote %s", output_dir)
