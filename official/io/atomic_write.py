"""Files and directories that appear complete or not at all."""

import contextlib
import os
import shutil
from typing import Dict, Iterator, Union


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
      tmp = f"{path}.tmp-{os.getpid()}"
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
  tmp = f"{path}.tmp-{os.getpid()}"
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
  tmp = f"{path.rstrip('/')}.tmp-{os.getpid()}"
  shutil.rmtree(tmp, ignore_errors=True)
  try:
    os.makedirs(tmp)
    yield tmp
    os.replace(tmp, path)
  finally:
    shutil.rmtree(tmp, ignore_errors=True)
