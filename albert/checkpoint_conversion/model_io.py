"""Our side of every conversion: reading a model directory, building the
model a format's weights go into, and writing a new model directory (or any
output) into a temporary sibling that is renamed into place only when
complete, so that a failed conversion leaves nothing behind.

The formats' own modules (original, huggingface, model_garden, keras_hub)
use these; `convert.convert` picks the format.
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
from albert.checkpoint_conversion.errors import ConversionError
from albert.modeling.config import AlbertConfig
from albert.modeling.pretrainer import AlbertPretrainer
from albert.modeling.weight_names import pretrainer_weights
from official.core import model_config_file
from official.errors import first_line
from official.io import atomic_write


# What released tarballs keep beside the checkpoint: the English models'
# SentencePiece model, the Chinese models' WordPiece vocabulary.
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
    tokenizer_folder: Optional[str] = None,
    extra_files: Optional[Dict[str, str]] = None,
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
    tokenizer_folder: where the format keeps its tokenizer file, copied
      into the model directory (`copy_tokenizer_files`).
    extra_files: name -> text of further files the model directory gets
      (e.g. an embedding model's settings).

  Returns:
    The checkpoint prefix written (`OUTPUT_DIR/ckpt-0`).
  """
  pretrainer, weights = build(config, table, uncovered)
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
    if tokenizer_folder:
      copy_tokenizer_files(tokenizer_folder, staging)
    for name, text in (extra_files or {}).items():
      with open(os.path.join(staging, name), "w", encoding="utf-8") as f:
        f.write(text)
  return os.path.join(output_dir, os.path.basename(written))


def read_config_file(path: Optional[str], checkpoint: str) -> AlbertConfig:
  """`path`, else the albert_config.json beside the checkpoint (as released)."""
  return config_and_path(path, checkpoint)[0]


def config_and_path(path, checkpoint) -> Tuple[AlbertConfig, str]:
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


def build(
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


def load_model(checkpoint: str) -> Tuple[AlbertPretrainer, AlbertConfig, str]:
  """(pretrainer, config, checkpoint prefix) of a model dir or a ckpt in one."""
  model_dir, ckpt = model_dir_lib.split_checkpoint(checkpoint)
  try:
    pretrainer, config = model_dir_lib.load_pretrainer(model_dir, ckpt)
    path = model_dir_lib.checkpoint_path(model_dir, ckpt)
  except ValueError as e:
    raise ConversionError(first_line(e)) from e
  return pretrainer, config, path


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


def encoder_part(table, exclude: Tuple[str, ...]) -> list:
  """The entries of a pretrainer name table without the pretraining heads
  (and whatever else `exclude` names by external prefix)."""
  return [e for e in table.entries if not e.external.startswith(exclude)]


def write_finetuned_dir(
    output_dir: str,
    model,
    *,
    step: int,
    model_config: Dict,
    files: Dict[str, str],
) -> str:
  """Writes a fine-tuning model directory of ours, as `run_finetuning`
  leaves one: `ckpt-{step}` of the model, its state file,
  `model_config.json` and the task's files (labels.json); eval, predict and
  export read it with the same recipe."""
  with staged(output_dir) as staging:
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model), staging, max_to_keep=None
    )
    path = manager.save(checkpoint_number=step)
    model_config_file.write(staging, model_config)
    for name, text in files.items():
      atomic_write.write_atomic(os.path.join(staging, name), text)
  return os.path.join(output_dir, os.path.basename(path))
