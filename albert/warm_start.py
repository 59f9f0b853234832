"""Warm starts: a new run's weights from another run's checkpoint.

The one path both trainings take, through `Task.initialize` (called by the
trainer when the model directory has no checkpoint of its own):
  fine-tuning           `load_encoder_weights`: the encoder of a pretrained
                        (or converted) checkpoint; the heads start fresh
                        (the original `run_classifier.py --init_checkpoint`)
  continued pretraining `init_pretrainer`: every weight (the original
                        `run_pretraining.py --init_checkpoint`,
                        `--init_from_group0`), and on request the
                        optimizer's moments where they line up
"""

import dataclasses
import os

from absl import logging
import gin
import numpy as np
import tensorflow as tf

from albert import model_dir as model_dir_lib
from albert.modeling import weight_names
from albert.modeling.config import AlbertConfig
from albert.modeling.encoder import AlbertEncoder
from albert.modeling.pretrainer import AlbertPretrainer
from official.core import checkpoints
from official.core import model_config_file
from official.errors import DamagedFileError
from official.errors import InputError
from official.errors import first_line
from official.io import files

POSITIONS = f"{weight_names.EMBEDDINGS}/position_embeddings"
EXTEND_METHODS = ("copy", "interpolate")


@gin.configurable
@dataclasses.dataclass(frozen=True)
class PositionTable:
  """How a warm start fills a position table longer than the checkpoint's
  (`AlbertConfig.max_position_embeddings` raised, for longer texts).

  Attributes:
    extend: `copy`: the learnt rows first, then repeated in order until the
      table is full (row i is learnt row i mod n), as Longformer (Beltagy
      et al., 2020, section 5) starts its 4,096 positions from RoBERTa's
      512; the first n rows are the checkpoint's. `interpolate`: the learnt
      table resampled linearly over the new positions (row i is the learnt
      table at i (n - 1) / (N - 1)), the first and last rows kept.
  """

  extend: str = "copy"

  def __post_init__(self):
    if self.extend not in EXTEND_METHODS:
      raise InputError(
          f"PositionTable.extend={self.extend!r} is not one of "
          f"{', '.join(EXTEND_METHODS)}"
      )


def extend_rows(table: np.ndarray, rows: int, method: str) -> np.ndarray:
  """`table` [n, E] as [rows, E] (rows >= n), filled as `PositionTable`
  says."""
  n = table.shape[0]
  if rows < n:
    raise ValueError(f"cannot extend a table of {n} rows to {rows}")
  if method == "copy":
    return table[np.arange(rows) % n]
  at = np.arange(rows) * ((n - 1) / max(rows - 1, 1))  # [rows] in [0, n-1]
  low = np.minimum(np.floor(at).astype(np.int64), n - 1)
  high = np.minimum(low + 1, n - 1)
  weight = (at - low)[:, np.newaxis].astype(table.dtype)
  return table[low] * (1 - weight) + table[high] * weight


def _assign_extended(target, source, path: str) -> bool:
  """target.assign(source's value), a shorter (position) table extended;
  whether it was."""
  value = np.asarray(source)
  extended = value.shape[0] < target.shape[0]
  if extended:
    method = PositionTable().extend
    logging.info(
        "%s: the position table's %d rows extended to %d (%s)",
        path,
        value.shape[0],
        target.shape[0],
        method,
    )
    value = extend_rows(value, target.shape[0], method)
  target.assign(value)
  return extended


def _checkpoint_positions(path: str):
  """Rows of the encoder's position table in checkpoint `path`, or None."""
  for key, shape in (
      checkpoints.reader(path).get_variable_to_shape_map().items()
  ):
    if (
        key.startswith("model/encoder/")
        and "position_embeddings/.ATTRIBUTES" in key
        and "OPTIMIZER_SLOT" not in key
    ):
      return shape[0]
  return None


def load_encoder_weights(
    encoder, init_checkpoint: str, config: AlbertConfig
) -> str:
  """Restores only the encoder of a pretrained (or converted) checkpoint.

  The heads of the checkpoint (masked LM, sentence order) and any optimizer
  state are ignored; fine-tuning heads keep their fresh initialisation.

  Args:
    encoder: the built `AlbertEncoder` to fill.
    init_checkpoint: a checkpoint prefix (`DIR/ckpt-N`) or a model directory
      (its latest checkpoint).
    config: the encoder's config; when the checkpoint's model directory has a
      `model_config.json`, both must agree.

  Returns:
    The checkpoint prefix read.

  Raises:
    ValueError: one line naming the differing config fields, or the tensor
      that is missing or has another shape.
  """
  path = model_dir_lib.checkpoint_path(init_checkpoint)
  source_dir = os.path.dirname(path)
  if files.exists(model_config_file.path(source_dir)):
    saved = model_dir_lib.read_model_config(source_dir).to_dict()
    wanted = config.to_dict()
    changed = model_config_file.differences(saved, wanted)
    longer = "max_position_embeddings"
    if changed == [longer] and wanted[longer] > saved[longer]:
      changed = []  # the learnt rows are extended below
    if changed:
      raise ValueError(
          f"init checkpoint {path} is another model (checkpoint -> config: "
          f"{model_config_file.describe(saved, wanted, changed)}); pass the "
          "gin size file it was trained with"
      )
  rows = _checkpoint_positions(path)
  source = encoder
  if rows is not None and rows < config.max_position_embeddings:
    # Read into an encoder of the checkpoint's table, then copied over.
    source = AlbertEncoder.from_config_object(
        config.replace(max_position_embeddings=rows)
    )
    source(source.dummy_inputs())  # every weight created, to be read
  model_dir_lib.restore_matched(
      tf.train.Checkpoint(model=tf.train.Checkpoint(encoder=source)),
      path,
      f"init checkpoint {path} does not fit the encoder",
  )
  if source is not encoder:
    have = weight_names.encoder_weights(source)
    for name, variable in weight_names.encoder_weights(encoder).items():
      _assign_extended(variable, have[name], path)
  return path


def init_pretrainer(
    pretrainer: AlbertPretrainer,
    optimizer,
    init_checkpoint: str,
    init_from_group0: bool = False,
    init_optimizer_slots: bool = False,
) -> str:
  """Continued pretraining: the weights (and optionally the optimizer slots)
  of another run's checkpoint, the original's `run_pretraining.py
  --init_checkpoint`.

  Every weight of `pretrainer` is read by name from the checkpoint (ours,
  or one `tools/convert_checkpoint.py` made from an original TF1 or Hugging
  Face checkpoint), shapes checked. With `init_from_group0` a shared block
  the checkpoint lacks (a model with more groups, or no sharing, than the
  checkpoint's) starts from block 0 of its kind, as the original's
  `--init_from_group0` meant. The original restores weights only (its
  `init_from_checkpoint` maps trainable variables), so the optimizer starts
  afresh; with `init_optimizer_slots` the checkpoint's slots (LAMB / AdamW
  moments) are restored too when it holds them for the same weights. The
  step counter stays 0 either way: a new run, with its own schedule.

  Returns:
    The checkpoint read.

  Raises:
    ValueError: no checkpoint there, or a weight missing or of another
      shape (naming it).
    DamagedFileError: a file of the checkpoint is truncated or corrupt.
  """
  source_dir, prefix = model_dir_lib.split_checkpoint(init_checkpoint)
  path = model_dir_lib.checkpoint_path(source_dir, prefix)
  try:
    source, _ = model_dir_lib.load_pretrainer(source_dir, path)
  except DamagedFileError:
    raise
  except ValueError as e:
    raise ValueError(f"--init_checkpoint: {first_line(e)}") from e
  weights = weight_names.pretrainer_weights(pretrainer)
  have = weight_names.pretrainer_weights(source)
  from_group0 = []
  for name, variable in weights.items():
    source_name = name
    if name not in have and init_from_group0:
      source_name = weight_names.first_block_name(name)
      from_group0.append(name)
    if source_name not in have:
      hint = (
          ""
          if init_from_group0
          else "; PretrainTask.init_from_group0=True starts blocks the "
          "checkpoint lacks from its block 0"
      )
      raise ValueError(
          f"--init_checkpoint {path} has no weight {source_name} for this "
          f"model{hint}"
      )
    shape = have[source_name].shape.as_list()
    longer_table = (
        name == POSITIONS
        and shape[1:] == variable.shape.as_list()[1:]
        and shape[0] < variable.shape[0]
    )
    if shape != variable.shape.as_list() and not longer_table:
      raise ValueError(
          f"--init_checkpoint {path}: {source_name} has shape {shape}, this "
          f"model's {name} {variable.shape.as_list()}; use the same "
          "architecture (model_config.json beside the checkpoint)"
      )
  extended = False
  for name, variable in weights.items():
    source_name = (
        weight_names.first_block_name(name) if name in from_group0 else name
    )
    extended |= _assign_extended(variable, have[source_name], path)
  if from_group0:
    logging.info(
        "init_from_group0: %d weights start from block 0 of %s",
        len(from_group0),
        path,
    )
  has_slots = any(
      k.startswith("optimizer/")
      for k in checkpoints.reader(path).get_variable_to_shape_map()
  )
  if init_optimizer_slots and optimizer is not None:
    if (
        has_slots
        and not from_group0
        and not extended
        and len(have) == len(weights)
    ):
      _restore_slots(optimizer, path)
    else:
      logging.warning(
          "%s: no optimizer slots for these weights; the moments start from "
          "zero",
          path,
      )
  return path


def _restore_slots(optimizer, path: str) -> None:
  """The checkpoint's optimizer slots, where they line up with ours; the
  step counter is reset to 0."""
  status = tf.train.Checkpoint(optimizer=optimizer).read(path)
  try:
    status.assert_existing_objects_matched()
  except AssertionError as e:
    logging.warning(
        "%s: its optimizer state does not fit this optimizer (%s); the "
        "moments start from zero",
        path,
        first_line(e),
    )
    for variable in optimizer.variables:
      variable.assign(tf.zeros_like(variable))
    return
  status.expect_partial()
  optimizer.iterations.assign(0)
  logging.info("Optimizer moments restored from %s; step 0", path)
