"""Files and directories that appear complete or not at all."""

import contextlib
import os
import shutil
from typing import Iterator, Union


def write_atomic(path: str, data: Union[str, bytes]) -> None:
  """Writes `data` under a temporary name beside `path`, then renames it.

  A crash leaves either the old file or the new one, never a half-written one
  (the rename is atomic on POSIX file systems). Text is written as UTF-8.
  """
  tmp = f"{path}.tmp-{os.getpid()}"
  mode = "wb" if isinstance(data, bytes) else "w"
  encoding = None if isinstance(data, bytes) else "utf-8"
  with open(tmp, mode, encoding=encoding) as f:
    f.write(data)
    f.flush()
    os.fsync(f.fileno())
  os.replace(tmp, path)


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
