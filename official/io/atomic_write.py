"""Files and directories that appear complete or not at all, on any file
system (`official.io.files`).

Where a rename replaces a file atomically (local disks, `ram://`, HDFS) a
file is written under a temporary name beside it, `PATH.tmp-PID`, and
renamed when complete: a crash leaves the old file or the new one, never a
half-written one. Object stores (`gs://`, `s3://`) have no rename, but an
object appears only once its upload completes: there the file is written
under its own name and its size checked after. A directory is made under a
temporary name and moved into place when complete (`files.rename_tree`).
"""

import contextlib
import os
import time
from typing import Dict, Iterator, List, Union

from absl import logging

from official.errors import InputError
from official.io import files


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
  files (or none), never some new files beside some old ones. On an object
  store the files are written in order under their own names, each
  checked for its size.
  """
  written = []
  try:
    for path, data in contents.items():
      if not files.renames_atomically(path):
        continue
      remove_stale_temporaries(path)
      tmp = _temporary(path)
      written.append((tmp, path))
      files.write_file(tmp, data, shown_as=path)
    for tmp, path in written:
      files.rename(tmp, path)
  except BaseException:
    for tmp, _ in written:
      files.remove(tmp)
    raise
  for path, data in contents.items():
    if not files.renames_atomically(path):
      files.write_file(path, data)
      _check_size(path, len(data if isinstance(data, bytes) else data.encode()))


def _check_size(path: str, expected: int) -> None:
  actual = files.size(path)
  if actual != expected:
    raise OSError(
        f"{path}: {actual} bytes after writing {expected}; write it again"
    )


def _temporary(path: str) -> str:
  return f"{path.rstrip('/')}.tmp-{os.getpid()}"


def stale_temporaries(path: str) -> List[str]:
  """The temporaries of `path` (`PATH.tmp-PID`) whose writer is gone: a
  process killed mid-write (kill -9, a lost machine) never removes its own.

  A temporary of this process, or of a process still running on this
  machine, is not stale. On a remote file system, where the writer may be
  another machine's process, every temporary but this process's is stale:
  one run writes a model directory (`official.core.run_lock`).
  """
  stale = []
  local = files.is_local(path)
  for tmp in files.glob(files.escape(path.rstrip("/")) + ".tmp-*"):
    pid = tmp.rsplit(".tmp-", 1)[1]
    if not pid.isdigit():
      continue
    if int(pid) == os.getpid() or (local and is_running(int(pid))):
      continue
    stale.append(tmp)
  return sorted(stale)


def remove_stale_temporaries(path: str) -> None:
  """Removes `stale_temporaries(path)`, so a rerun after a crash leaves no
  trace of it."""
  for tmp in stale_temporaries(path):
    logging.info("Removing %s, left by an interrupted write", tmp)
    files.remove_any(tmp)


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
    running = sorted(pid for pid in pids if is_running(pid))
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
      for tmp in files.glob(os.path.join(files.escape(directory), "*.tmp-*"))
  }
  for target in sorted(targets):
    remove_stale_temporaries(target)


def is_running(pid: int) -> bool:
  """Whether process `pid` exists and has not exited (a zombie, ended but
  not yet reaped by its parent, writes nothing more)."""
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  except PermissionError:
    return True  # another user's process
  try:
    # local-only: the process table.
    with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
      return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
  except (OSError, IndexError):
    return True  # no /proc (macOS): it exists


def chmod_as_created(path: str, directory: bool = False) -> None:
  """Gives `path` the mode a plain `open` / `mkdir` would have (the umask's),
  for files made private by `mkstemp` / `mkdtemp` or a library. Local
  files only."""
  umask = os.umask(0)
  os.umask(umask)
  os.chmod(path, (0o777 if directory else 0o666) & ~umask)


@contextlib.contextmanager
def atomic_file(path: str, mode: str = "w", **open_kwargs) -> Iterator:
  """Yields a file open under a temporary name beside `path`, renamed to
  `path` when the block ends; for output written piece by piece (on an
  object store: under its own name, which appears when the block ends).

  If the block raises, the temporary is removed and `path` is untouched; an
  OSError of the writes themselves (a full disk) names `path`.
  """
  if not files.renames_atomically(path):
    with files.open_write(path, mode, **open_kwargs) as f:
      yield f
    return
  remove_stale_temporaries(path)
  tmp = _temporary(path)
  try:
    with files.open_write(tmp, mode, shown_as=path, **open_kwargs) as f:
      yield f
    files.rename(tmp, path)
  except BaseException:
    files.remove(tmp)
    raise


@contextlib.contextmanager
def atomic_directory(path: str) -> Iterator[str]:
  """Yields a temporary directory that becomes `path` when the block ends
  (on a local disk by one rename; elsewhere its files are moved one by
  one, then checked: `files.rename_tree`).

  `path` must not exist. If the block raises, the temporary directory is
  removed and `path` is left untouched.
  """
  if files.exists(path):
    raise ValueError(f"{path} exists: choose a new directory or remove it")
  remove_stale_temporaries(path)
  tmp = _temporary(path)
  files.rmtree(tmp)
  try:
    files.makedirs(tmp)
    yield tmp
    files.rename_tree(tmp, path)
  finally:
    files.rmtree(tmp)
