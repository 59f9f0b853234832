"""Small file helpers shared by data generation, training and fine-tuning."""

import hashlib
import os

from official.errors import InputError


def file_sha256(path: str) -> str:
  """Hex SHA-256 of a local file's bytes, read in 1 MB chunks."""
  digest = hashlib.sha256()
  with open(path, "rb") as f:
    for chunk in iter(lambda: f.read(1 << 20), b""):
      digest.update(chunk)
  return digest.hexdigest()


def read_bytes(path: str, what: str) -> bytes:
  """A local file's bytes; one InputError line naming it if unreadable."""
  try:
    with open(path, "rb") as f:
      return f.read()
  except OSError as e:
    raise InputError(f"cannot read {what} {path}: {e.strerror or e}") from None


def check_writable_dir(path: str, what: str) -> None:
  """Refuses, before any work, a directory the run could not write.

  `path` may not exist yet (it is created when the first output is
  written): then its nearest existing parent must be a writable directory.
  Nothing is created. Remote paths (`gs://...`) are not checked.

  Raises:
    InputError: `path` (or a parent) is a file, or not writable (permissions,
      a read-only file system).
  """
  if "://" in path:
    return
  existing = os.path.abspath(path)
  while not os.path.exists(existing):
    existing = os.path.dirname(existing)
  if not os.path.isdir(existing):
    raise InputError(
        f"{what} {path}: {existing} is a file, not a directory; choose "
        "another path"
    )
  if not os.access(existing, os.W_OK | os.X_OK):
    raise InputError(
        f"{what} {path}: {existing} is not writable (permissions or a "
        "read-only file system); choose a writable location"
    )
