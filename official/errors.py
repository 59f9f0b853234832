"""Errors a user can act on, and their one-line description.

`InputError` is the error for bad user input (files, models, flag values).
`describe(error)` turns it, and the environment faults a command meets (a
missing, unreadable or corrupt file, permissions, a read-only or full disk,
a dead worker process), into one line that names the file, what is wrong and
what to do. Everything else is a programming error: `describe` returns None
and the traceback is shown.
"""

import errno
import re
import sys
from concurrent.futures.process import BrokenProcessPool
from typing import Optional


class InputError(ValueError):
  """Bad input: the message is one line that says what and what to do.

  Command-line tools print the message and exit non-zero; nothing is left
  behind in the output location.
  """


class CommandError(RuntimeError):
  """A command this one ran failed; the message quotes its error line."""


class UnavailableError(RuntimeError):
  """A device or service the run needs (a TPU, a worker) is not reachable."""


class Preempted(RuntimeError):
  """A signal stopped the run after it saved its state (`official.core.
  preemption`); the commands exit with `exit_code`; a rerun resumes."""

  exit_code = 75  # sysexits.h EX_TEMPFAIL


class DamagedFileError(InputError):
  """A file the run reads is truncated or corrupt (checkpoint, TFRecord)."""


# What to do, by errno: the file name and the OS's words come first.
_ERRNO_ADVICE = {
    errno.ENOSPC: "free space on that disk, then rerun the same command",
    errno.EDQUOT: "free space (disk quota), then rerun the same command",
    errno.EFBIG: (
        "the file exceeds the file system's or the process's size limit "
        "(ulimit -f): write elsewhere or raise the limit, then rerun"
    ),
    errno.EROFS: "choose a location on a writable file system",
    errno.EACCES: "fix the permissions or choose another location",
    errno.EPERM: "fix the permissions or choose another location",
    errno.ENOENT: "check the path",
    errno.ENOTDIR: "a part of the path is a file: choose another path",
    errno.EISDIR: "give a file, not a directory",
    errno.EEXIST: "choose a new name or remove it",
    errno.EIO: "the device reported an I/O error: check the disk",
}

# The same faults as TensorFlow's C++ file system words them.
_TF_ADVICE = (
    ("No space left on device", errno.ENOSPC),
    ("Disk quota exceeded", errno.EDQUOT),
    ("File too large", errno.EFBIG),
    ("Read-only file system", errno.EROFS),
    ("Permission denied", errno.EACCES),
    ("Not a directory", errno.ENOTDIR),
    ("Is a directory", errno.EISDIR),
)


def first_line(error: BaseException) -> str:
  """The first non-empty line of the error's message (its type if none); for
  TensorFlow's errors, the reason without the graph-execution frame."""
  if _is_op_error(error):
    return op_message(error)
  return _first_text_line(str(error)) or type(error).__name__


def _first_text_line(text: str) -> str:
  for line in text.strip().splitlines():
    if line.strip():
      return line.strip()
  return ""


def _is_op_error(error: BaseException) -> bool:
  tf = sys.modules.get("tensorflow")
  return tf is not None and isinstance(error, tf.errors.OpError)


def _os_error(error: OSError) -> str:
  what = error.strerror or first_line(error)
  names = [n for n in (error.filename, error.filename2) if n]
  where = " -> ".join(str(n) for n in names)
  advice = _ERRNO_ADVICE.get(error.errno)
  return "; ".join(
      p for p in (f"{where}: {what}" if where else what, advice) if p
  )


# Lines TensorFlow adds around the message of an op that failed inside a
# tf.function; the message itself is the first line that is none of them.
_TF_NOISE = (
    "Graph execution error",
    "Detected at node",
    "Detected in ",
    "<stack traces unavailable>",
)


def op_message(error) -> str:
  """The reason of a TensorFlow OpError, without the graph-execution frame
  (`Detected at node ... File ...`) and the trailing `[[{{node ...}}]]`."""
  for line in str(getattr(error, "message", error)).splitlines():
    if not line.strip() or line[:1].isspace() or line.startswith(_TF_NOISE):
      continue
    return re.sub(r"\s*\[Op:[^\]]*\]$", "", line.strip())
  return _first_text_line(str(error)) or type(error).__name__


def _op_error(error, tf) -> str:
  message = op_message(error)
  whole = str(getattr(error, "message", error))
  for words, code in _TF_ADVICE:
    if words in whole:
      return f"{message}; {_ERRNO_ADVICE[code]}"
  if isinstance(error, tf.errors.DataLossError):
    return f"{message}; the file is truncated or corrupt: recreate it"
  if isinstance(error, tf.errors.NotFoundError):
    return f"{message}; check the path"
  return message


def describe(error: BaseException) -> Optional[str]:
  """One line for a user error or an environment fault; None otherwise.

  `ValueError` is the library's error for bad input and configuration (it
  names the value and what to do); `OSError` and TensorFlow's `OpError` are
  environment faults and get advice by kind.
  """
  if isinstance(
      error,
      (
          ValueError,
          FloatingPointError,
          CommandError,
          UnavailableError,
          Preempted,
      ),
  ):
    return first_line(error)
  if isinstance(error, BrokenProcessPool):
    return (
        "a worker process died (killed, out of memory?); run the same "
        "command again to resume"
    )
  if isinstance(error, OSError):
    return _os_error(error)
  # TensorFlow's errors only when TensorFlow is loaded: this module stays
  # cheap to import for processes that never load it.
  tf = sys.modules.get("tensorflow")
  if tf is not None and isinstance(error, tf.errors.OpError):
    return _op_error(error, tf)
  if isinstance(error, KeyboardInterrupt):
    return "interrupted; run the same command again to resume"
  return None
