"""Reading and writing name-based (TF1) checkpoints as numpy arrays.

The original ALBERT saves with a `tf.compat.v1.train.Saver`: each variable
under its graph name (`bert/embeddings/word_embeddings`), in a `PREFIX.index`
+ `PREFIX.data-*` pair, with a `checkpoint` state file beside it. We write the
same with `tf.raw_ops.SaveV2`, so the keys are exactly the names given.
"""

import os
from typing import Dict, Tuple

import numpy as np
import tensorflow as tf

from albert.checkpoint_conversion.errors import ConversionError
from official.core import checkpoints
from official.errors import first_line

# Present in object-based (TF2) checkpoints only.
OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


def resolve_prefix(path: str) -> str:
  """The checkpoint prefix `path` means: a prefix, its `.index` file, or a
  directory with a `checkpoint` state file (its latest checkpoint)."""
  try:
    return checkpoints.resolve(path)
  except ValueError:
    if os.path.isdir(path):
      raise ConversionError(
          f"--checkpoint={path} is a directory without a 'checkpoint' state "
          "file; give the checkpoint prefix, e.g. DIR/model.ckpt-best"
      ) from None
    prefix = path[: -len(".index")] if path.endswith(".index") else path
    raise ConversionError(
        f"--checkpoint={prefix}: no checkpoint there ({prefix}.index not "
        "found); give the prefix, e.g. DIR/model.ckpt-best"
    ) from None


def read_checkpoint(path: str) -> Tuple[Dict[str, np.ndarray], str]:
  """(name -> array of every tensor, the prefix read) of a TF1 checkpoint."""
  prefix = resolve_prefix(path)
  try:
    reader = tf.train.load_checkpoint(prefix)
    names = reader.get_variable_to_shape_map()
    if OBJECT_GRAPH_KEY in names:
      raise ConversionError(
          f"{prefix} is an object-based TF2 checkpoint, not an original "
          "(name-based) one; to convert a model directory of ours use --to"
      )
    return {name: np.asarray(reader.get_tensor(name)) for name in names}, prefix
  except (tf.errors.OpError, ValueError, IndexError) as e:
    if isinstance(e, ConversionError):
      raise
    raise ConversionError(
        f"cannot read checkpoint {prefix} (a truncated or corrupt "
        f"{prefix}.index or .data file?): {first_line(e)}"
    ) from e


def write_checkpoint(
    directory: str, name: str, tensors: Dict[str, np.ndarray]
) -> str:
  """Writes DIRECTORY/NAME.{index,data-*} with exactly these keys, and the
  `checkpoint` state file naming it. Returns the prefix."""
  prefix = os.path.join(directory, name)
  names = sorted(tensors)
  tf.raw_ops.SaveV2(
      prefix=prefix,
      tensor_names=names,
      shape_and_slices=[""] * len(names),
      tensors=[tf.constant(tensors[n]) for n in names],
  )
  with open(os.path.join(directory, "checkpoint"), "w", encoding="utf-8") as f:
    f.write(
        f'model_checkpoint_path: "{name}"\n'
        f'all_model_checkpoint_paths: "{name}"\n'
    )
  return prefix
