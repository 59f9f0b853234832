"""One training run per model directory: `hold(model_dir)`.

A scheduler that restarts a job whose old process still runs, or a user who
types the command twice, would otherwise have two runs interleave their
checkpoints and summaries in one directory. For the whole run the trainer's
chief holds `MODEL_DIR/.lock` (a worker of a multi-worker run holds the one
of its scratch directory inside MODEL_DIR), removed when the run ends. It is
inside the directory, not beside it, because a model directory is often a
mount point whose parent nobody may write:

- The lock is an exclusive `flock` on that file, taken without waiting. The
  kernel releases it when the process ends, however it ends, so a lock left
  by a killed run never blocks the next one: the file's text (host, pid,
  start time, command of the holder) is then only a record, and the next run
  takes it over with a warning naming the run that did not release it.
- A second run refuses in one line naming the holder (`ModelDirLockedError`).
- On a clean exit the file is removed.

Evaluation and export only read the directory and do not take the lock.

Where it holds: local disks; NFS, whose Linux client maps `flock` to NFS
byte-range locks (NFSv4, or NFSv3 with the lock manager), a dead client's lock
lasting until its lease ends (about 90 s). Object stores (`gs://`, `s3://`)
have no locks: there `hold` logs a warning and locks nothing, and keeping one
run per directory is the scheduler's job.
"""

import contextlib
import fcntl
import json
import os
import socket
import sys
import time
from typing import Iterator, Optional

from absl import logging

from official.errors import InputError

LOCK_FILE = ".lock"


class ModelDirLockedError(InputError):
  """Another live run holds the model directory."""


def lock_path(model_dir: str) -> str:
  """MODEL_DIR/.lock (symbolic links resolved)."""
  return os.path.join(os.path.realpath(model_dir), LOCK_FILE)


def _describe(holder: dict) -> str:
  return (
      f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, started "
      f"{holder.get('started', '?')}: {holder.get('command', '?')}"
  )


def _read(fd: int) -> Optional[dict]:
  os.lseek(fd, 0, os.SEEK_SET)
  text = os.read(fd, 1 << 16).decode("utf-8", "replace")
  try:
    holder = json.loads(text)
  except ValueError:
    return None
  return holder if isinstance(holder, dict) else None


def _acquire(path: str, model_dir: str) -> int:
  """The open, locked lock file's descriptor; refuses when it is held."""
  while True:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
      fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
      holder = _read(fd)
      os.close(fd)
      raise ModelDirLockedError(
          f"model_dir {model_dir} is in use by another run ("
          + (_describe(holder) if holder else f"see {path}")
          + "): wait for it to end or stop it, or choose another model_dir"
      ) from None
    except BaseException:
      os.close(fd)
      raise
    try:
      same = os.fstat(fd).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
      same = False
    if same:
      return fd
    # The holder removed the file between our open and our lock: the lock
    # we hold is on a deleted file. Try again on the new one.
    os.close(fd)


@contextlib.contextmanager
def hold(model_dir: str) -> Iterator[None]:
  """Holds MODEL_DIR/.lock for the `with` body.

  Raises:
    ModelDirLockedError: another live run holds it (one line, the holder).
  """
  if "://" in model_dir:
    logging.warning(
        "model_dir %s is not on a local or NFS disk: not locked; make sure "
        "only one run trains into it",
        model_dir,
    )
    yield
    return
  path = lock_path(model_dir)
  os.makedirs(os.path.dirname(path), exist_ok=True)  # a new model_dir
  fd = _acquire(path, model_dir)
  try:
    previous = _read(fd)
    if previous:
      logging.warning(
          "model_dir %s: taking over the lock of a run that ended without "
          "releasing it (%s)",
          model_dir,
          _describe(previous),
      )
    owner = {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": " ".join(sys.argv),
    }
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(owner).encode("utf-8"), 0)
    os.fsync(fd)
    yield
  finally:
    with contextlib.suppress(FileNotFoundError):
      os.remove(path)  # before unlocking: no one can lock a file we remove
    os.close(fd)
