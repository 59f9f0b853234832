"""Files and directories that appear complete or not at all."""

import contextlib
import glob
import os
import shutil
import time
from typing import Dict, Iterator, List, Union

from absl import logging

from official.errors import InputError


def write_atomic(path: str, data: Union[str, bytes]) -> None:
  """Writes `data` under a temporary name beside `path`, then renames it.

  A crash leaves either the old file or the new one, never a half-written one
  (the rename is atomic on POSIX file systems); a failed write (a full disk)
  removes its temporary. Text is written as UTF-8.
  """
  write_atomic_files({path: data})


def write_atomic_files(contents: Dict[str, Union[str, bytes]]) -> None:
  """Writes several files that appear together: every one is written under
  a temporary name first, and only then are they renamed.

  A failed write (a full disk) removes the temporaries and leaves the old
  files (or none), never some new files beside some old ones.
  """
  written = []
  try:
    for path, data in contents.items():
      remove_stale_temporaries(path)
      tmp = _temporary(path)
      written.append((tmp, path))
      binary = isinstance(data, bytes)
      with open(tmp, "wb" if binary else "w", **_text(binary)) as f:
        with _naming(path):
          f.write(data)
          _sync(f)
    for tmp, path in written:
      os.replace(tmp, path)
  except BaseException:
    for tmp, _ in written:
      with contextlib.suppress(OSError):
        os.remove(tmp)
    raise


def _temporary(path: str) -> str:
  return f"{path.rstrip('/')}.tmp-{os.getpid()}"


def stale_temporaries(path: str) -> List[str]:
  """The temporaries of `path` (`PATH.tmp-PID`) whose writer is gone: a
  process killed mid-write (kill -9, a lost machine) never removes its own.

  A temporary of this process, or of a process still running on this
  machine, is not stale.
  """
  stale = []
  for tmp in glob.glob(glob.escape(path.rstrip("/")) + ".tmp-*"):
    pid = tmp.rsplit(".tmp-", 1)[1]
    if not pid.isdigit():
      continue
    if int(pid) == os.getpid() or _running(int(pid)):
      continue
    stale.append(tmp)
  return sorted(stale)


def remove_stale_temporaries(path: str) -> None:
  """Removes `stale_temporaries(path)`, so a rerun after a crash leaves no
  trace of it."""
  for tmp in stale_temporaries(path):
    logging.info("Removing %s, left by an interrupted write", tmp)
    if os.path.isdir(tmp):
      shutil.rmtree(tmp, ignore_errors=True)
    else:
      with contextlib.suppress(FileNotFoundError):
        os.remove(tmp)


def wait_for_writers(temporaries: List[str], timeout: float = 30.0) -> None:
  """Waits until every process that is writing one of `temporaries`
  (`*.tmp-PID`, other than this one) has exited: a killed run's workers may
  still be finishing when the rerun starts.

  Raises:
    InputError: a writer still runs after `timeout` seconds (another run
      writing the same files).
  """
  pids = set()
  for tmp in temporaries:
    pid = tmp.rsplit(".tmp-", 1)[-1]
    if pid.isdigit() and int(pid) != os.getpid():
      pids.add(int(pid))
  deadline = time.monotonic() + timeout
  while True:
    running = sorted(pid for pid in pids if _running(pid))
    if not running:
      return
    if time.monotonic() > deadline:
      raise InputError(
          f"{os.path.dirname(temporaries[0])}: process {running[0]} is still "
          "writing here (another run of the same job?); wait for it to end "
          "or stop it, then run again"
      )
    time.sleep(0.05)


def remove_stale_temporaries_in(directory: str) -> None:
  """`remove_stale_temporaries` for every file of `directory`, including
  those the rerun will not write again."""
  targets = {
      tmp.rsplit(".tmp-", 1)[0]
      for tmp in glob.glob(os.path.join(glob.escape(directory), "*.tmp-*"))
  }
  for target in sorted(targets):
    remove_stale_temporaries(target)


def _running(pid: int) -> bool:
  """Whether process `pid` exists and has not exited (a zombie, ended but
  not yet reaped by its parent, writes nothing more)."""
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  except PermissionError:
    return True  # another user's process
  try:
    with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
      return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
  except (OSError, IndexError):
    return True  # no /proc (macOS): it exists


def chmod_as_created(path: str, directory: bool = False) -> None:
  """Gives `path` the mode a plain `open` / `mkdir` would have (the umask's),
  for files made private by `mkstemp` / `mkdtemp` or a library."""
  umask = os.umask(0)
  os.umask(umask)
  os.chmod(path, (0o777 if directory else 0o666) & ~umask)


def _text(binary: bool) -> dict:
  return {} if binary else {"encoding": "utf-8"}


def _sync(f) -> None:
  f.flush()
  os.fsync(f.fileno())


@contextlib.contextmanager
def _naming(path: str) -> Iterator[None]:
  """An OSError of a write itself (a full disk, which Python reports without
  a file name) names `path`, the file being made, not its temporary."""
  try:
    yield
  except OSError as e:
    if e.filename:
      raise
    raise OSError(e.errno, e.strerror, path) from e


@contextlib.contextmanager
def atomic_file(path: str, mode: str = "w", **open_kwargs) -> Iterator:
  """Yields a file open under a temporary name beside `path`, renamed to
  `path` when the block ends; for output written piece by piece.

  If the block raises, the temporary is removed and `path` is untouched; an
  OSError of the writes themselves (a full disk) names `path`.
  """
  remove_stale_temporaries(path)
  tmp = _temporary(path)
  try:
    with open(tmp, mode, **open_kwargs) as f:
      with _naming(path):
        yield f
        _sync(f)
    os.replace(tmp, path)
  except BaseException:
    with contextlib.suppress(OSError):
      os.remove(tmp)
    raise


@contextlib.contextmanager
def atomic_directory(path: str) -> Iterator[str]:
  """Yields a temporary directory that becomes `path` when the block ends.

  `path` must not exist. If the block raises, the temporary directory is
  removed and `path` is left untouched.
  """
  if os.path.exists(path):
    raise ValueError(f"{path} exists: choose a new directory or remove it")
  remove_stale_temporaries(path)
  tmp = _temporary(path)
  shutil.rmtree(tmp, ignore_errors=True)
  try:
    os.makedirs(tmp)
    yield tmp
    os.replace(tmp, path)
  finally:
    shutil.rmtree(tmp, ignore_errors=True)
