"""`write_atomic`: a file appears complete or not at all."""

import os
from typing import Union


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
