"""Which file of a TensorFlow checkpoint is damaged, if any.

A checkpoint `PREFIX` is `PREFIX.index` (names, shapes, offsets) and
`PREFIX.data-*` (the values). A truncated or overwritten file makes a restore
fail with whatever TensorFlow's reader hits first (DataLossError, "Read less
bytes than requested", a parse error). `find_damage` reads the checkpoint
the slow, thorough way, every tensor, to tell a damaged file from a
checkpoint of another model; callers run it only after a restore failed.
"""

import os
from typing import Optional

from google.protobuf import message
import tensorflow as tf

from official.errors import DamagedFileError
from official.errors import first_line


# Faults of the environment, not of the bytes: they propagate, so that a run
# never skips a good checkpoint it merely could not read this time. (The
# checkpoint reader reports most problems as a plain OpError, so the words
# count as well as the type.)
_NOT_DAMAGE_WORDS = ("Permission denied", "Resource exhausted", "Unavailable")


def _not_damage_types():
  return (
      tf.errors.PermissionDeniedError,
      tf.errors.UnavailableError,
      tf.errors.ResourceExhaustedError,
      tf.errors.DeadlineExceededError,
      tf.errors.CancelledError,
      tf.errors.AbortedError,
  )


def _check_damage(error: BaseException) -> None:
  """Re-raises `error` unless it says the bytes are bad."""
  if isinstance(error, _not_damage_types()) or any(
      words in str(error) for words in _NOT_DAMAGE_WORDS
  ):
    raise error


# What a reader raises on bytes that are not a whole checkpoint (a truncated
# index: "not an sstable"; a flipped byte: "Checksum does not match"; a short
# data file: IndexError "Read less bytes than requested").
_READ_ERRORS = (tf.errors.OpError, IndexError, ValueError, message.DecodeError)


def find_damage(prefix: str) -> Optional[str]:
  """One line naming the damaged file of checkpoint `prefix`; None if every
  tensor reads back.

  Raises:
    Errors that are not damage (e.g. PermissionDeniedError), unchanged.
  """
  index = prefix + ".index"
  if not tf.io.gfile.exists(index):
    return f"{index} is missing"
  try:
    reader = tf.compat.v1.train.NewCheckpointReader(prefix)
    shapes = reader.get_variable_to_shape_map()
  except _READ_ERRORS as e:
    _check_damage(e)
    return f"{index} is truncated or corrupt ({first_line(e)})"
  for name in sorted(shapes):
    try:
      reader.get_tensor(name)
    except _READ_ERRORS as e:
      _check_damage(e)
      data = sorted(tf.io.gfile.glob(prefix + ".data-*"))
      files = ", ".join(data) if data else prefix + ".data-*"
      return f"{files}: truncated or corrupt ({name}: {first_line(e)})"
  return None


def raise_if_damaged(prefix: str, error: BaseException) -> None:
  """After `error` in a restore of `prefix`: raises DamagedFileError naming
  the file if the checkpoint is damaged; returns if it reads back whole."""
  damage = find_damage(prefix)
  if damage:
    raise DamagedFileError(
        f"checkpoint {os.path.basename(prefix)} is damaged: {damage}; use an "
        "earlier ckpt-N (--checkpoint) or restore the files from a backup"
    ) from error
