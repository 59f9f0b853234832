"""Every file-system call of the package: local disks directly, everything
else through `tf.io.gfile`.

A path may be local or on any file system TensorFlow registers (`gs://`,
`s3://`, `hdfs://`, and `ram://`, its in-memory one that the tests use as
a stand-in for an object store); it behaves the same: the same files, the
same refusals, the same clean-up. Library modules do not call `open`,
`os.path.exists`, `glob` and the like on the paths users give them (a test
checks); they call the functions here.

Local paths keep what only a local disk has: writes are flushed with
`fsync`, and a file or a directory is renamed into place atomically. Object
stores have no rename: there a file is written under its own name (an
object appears only when its upload completes) and its size is checked
after; a directory's files are moved one by one (`rename_tree`).

An object store that refuses access (no credentials, no permission, no
network) is one line naming the path and how to authenticate
(`RemoteAccessError`). TensorFlow is imported for remote paths only: the
data tools' worker processes write local files without it.
"""

import contextlib
import errno
import glob as local_glob
import hashlib
import io
import os
import posixpath
import shutil
from typing import Iterator, List, Optional, Union

from official.errors import InputError
from official.errors import op_message
from official.io.remote import RemoteAccessError  # noqa: F401 (re-exported)
from official.io.remote import access
from official.io.remote import is_local
from official.io.remote import scheme

# File systems whose rename of a file replaces the target atomically.
_ATOMIC_RENAME = ("", "file", "ram", "hdfs", "viewfs")


def _tf():
  """TensorFlow, for remote paths (not imported for local ones)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  return tf


def _ram():
  from official.io import ram_fs  # pylint: disable=g-import-not-at-top

  return ram_fs


def _local(path: str) -> str:
  path = os.fspath(path)
  return path[len("file://") :] if path.startswith("file://") else path


def renames_atomically(path: str) -> bool:
  """Whether renaming a file onto `path` replaces it atomically."""
  return scheme(path) in _ATOMIC_RENAME


# --- Queries --------------------------------------------------------------


def exists(path: str) -> bool:
  if is_local(path):
    return os.path.exists(_local(path))
  if scheme(path) == "ram":
    return _ram().exists(path)
  with access(path):
    return _tf().io.gfile.exists(path)


def isdir(path: str) -> bool:
  if is_local(path):
    return os.path.isdir(_local(path))
  if scheme(path) == "ram":
    return _ram().isdir(path)
  with access(path):
    return _tf().io.gfile.isdir(path)


def isfile(path: str) -> bool:
  return exists(path) and not isdir(path)


def size(path: str) -> int:
  """The file's length in bytes."""
  if is_local(path):
    return os.path.getsize(_local(path))
  with access(path):
    return _tf().io.gfile.stat(path).length


def listdir(path: str) -> List[str]:
  """The names in directory `path`, sorted (no trailing slashes)."""
  if is_local(path):
    return sorted(os.listdir(_local(path)))
  if scheme(path) == "ram":
    return _ram().listdir(path)
  with access(path):
    return sorted(n.rstrip("/") for n in _tf().io.gfile.listdir(path))


def glob(pattern: str) -> List[str]:
  """The paths matching `pattern` (`*`, `?`, `[...]`), sorted."""
  if is_local(pattern):
    prefix = "file://" if pattern.startswith("file://") else ""
    return sorted(prefix + p for p in local_glob.glob(_local(pattern)))
  with access(pattern):
    found = _tf().io.gfile.glob(pattern)
  if scheme(pattern) == "ram":
    found = [p for p in found if _ram().exists(p)]
  return sorted(found)


def escape(path: str) -> str:
  """`path` with glob's special characters matched literally."""
  return "".join(f"[{c}]" if c in "*?[" else c for c in path)


def walk_files(directory: str) -> List[str]:
  """Every file under `directory`, relative to it, sorted ("/"-separated)."""
  found = []
  for name in listdir(directory):
    path = posixpath.join(directory.rstrip("/"), name)
    if isdir(path):
      found += [f"{name}/{inner}" for inner in walk_files(path)]
    else:
      found.append(name)
  return sorted(found)


# --- Reading --------------------------------------------------------------


def _reading_error(path: str, what: Optional[str], error) -> InputError:
  reason = (
      (error.strerror or str(error))
      if isinstance(error, OSError)
      else op_message(error)
  )
  return InputError(f"cannot read {what + ' ' if what else ''}{path}: {reason}")


def read_bytes(path: str, what: Optional[str] = None) -> bytes:
  """A file's bytes. With `what` (e.g. "SentencePiece model"), a file that
  cannot be read is one InputError line naming it."""
  if is_local(path):
    try:
      with open(_local(path), "rb") as f:
        return f.read()
    except OSError as e:
      if what is None:
        raise
      raise _reading_error(path, what, e) from None
  tf = _tf()
  try:
    with access(path), tf.io.gfile.GFile(path, "rb") as f:
      return f.read()
  except tf.errors.OpError as e:
    if what is None:
      raise
    raise _reading_error(path, what, e) from None


def read_text(
    path: str, what: Optional[str] = None, encoding: str = "utf-8"
) -> str:
  """A text file's contents (universal newlines, as `open` reads them)."""
  with open_text(path, what, encoding=encoding) as f:
    return f.read()


def open_text(
    path: str,
    what: Optional[str] = None,
    *,
    encoding: str = "utf-8",
    newline: Optional[str] = None,
):
  """A text file open for reading, as `open(path, encoding=, newline=)`
  gives it (a remote file is read whole first)."""
  if is_local(path):
    try:
      return open(_local(path), encoding=encoding, newline=newline)
    except OSError as e:
      if what is None:
        raise
      raise _reading_error(path, what, e) from None
  data = read_bytes(path, what)
  return io.TextIOWrapper(io.BytesIO(data), encoding=encoding, newline=newline)


def file_sha256(path: str) -> str:
  """Hex SHA-256 of a file's bytes, read in 1 MB chunks."""
  digest = hashlib.sha256()
  if is_local(path):
    with open(_local(path), "rb") as f:
      for chunk in iter(lambda: f.read(1 << 20), b""):
        digest.update(chunk)
    return digest.hexdigest()
  with access(path), _tf().io.gfile.GFile(path, "rb") as f:
    for chunk in iter(lambda: f.read(1 << 20), b""):
      digest.update(chunk)
  return digest.hexdigest()


# --- Writing --------------------------------------------------------------


def makedirs(path: str) -> None:
  """Creates `path` and its parents (nothing if it exists)."""
  if is_local(path):
    os.makedirs(_local(path), exist_ok=True)
    return
  if scheme(path) == "ram":
    _ram().makedirs(path)
    return
  with access(path):
    _tf().io.gfile.makedirs(path)


def write_file(
    path: str, data: Union[str, bytes], shown_as: Optional[str] = None
) -> None:
  """Writes `data` to `path` (text as UTF-8); on a local disk flushed to it
  (`fsync`) before returning. A failed write (a full disk) names `shown_as`
  (default `path`). Not atomic: see `official.io.atomic_write`."""
  binary = isinstance(data, bytes)
  if is_local(path):
    with open(
        _local(path), "wb" if binary else "w", **_text_options(binary)
    ) as f:
      with naming(shown_as or path):
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return
  with access(path), _tf().io.gfile.GFile(path, "wb") as f:
    f.write(data if binary else data.encode("utf-8"))


@contextlib.contextmanager
def open_write(
    path: str, mode: str = "w", shown_as: Optional[str] = None, **open_kwargs
) -> Iterator:
  """A file open for writing at `path` (`mode` "w" or "wb", `open`'s
  options for text), synced to a local disk when the block ends; a failed
  write names `shown_as` (default `path`). Elsewhere the file is kept in
  memory and written when the block ends without an error, so that a
  failure leaves no part of it. Not atomic on a local disk: see
  `official.io.atomic_write.atomic_file`."""
  if is_local(path):
    with open(_local(path), mode, **open_kwargs) as f:
      with naming(shown_as or path):
        yield f
        f.flush()
        os.fsync(f.fileno())
    return
  buffer = io.BytesIO()
  if "b" in mode:
    yield buffer
  else:
    text = io.TextIOWrapper(
        buffer,
        encoding=open_kwargs.get("encoding", "utf-8"),
        newline=open_kwargs.get("newline"),
        write_through=True,
    )
    yield text
    text.flush()
    text.detach()
  write_file(path, buffer.getvalue())


def _text_options(binary: bool) -> dict:
  return {} if binary else {"encoding": "utf-8"}


@contextlib.contextmanager
def naming(path: str) -> Iterator[None]:
  """An OSError of a write itself (a full disk, which Python reports without
  a file name) names `path`, the file being made, not its temporary."""
  try:
    yield
  except OSError as e:
    if e.filename:
      raise
    raise OSError(e.errno, e.strerror, path) from e


def rename(source: str, target: str, overwrite: bool = True) -> None:
  """Renames a file (a directory only on a local disk)."""
  if is_local(source) and is_local(target):
    if overwrite:
      os.replace(_local(source), _local(target))
    else:
      os.rename(_local(source), _local(target))
    return
  with access(target):
    _tf().io.gfile.rename(source, target, overwrite=overwrite)


def rename_tree(source: str, target: str) -> None:
  """Moves directory `source` to `target` (which must not exist): one
  rename on a local disk; elsewhere file by file, then the file list and
  sizes are checked."""
  if is_local(source) and is_local(target):
    os.replace(_local(source), _local(target))
    return
  names = walk_files(source)
  sizes = {name: size(posixpath.join(source, name)) for name in names}
  makedirs(target)
  for name in names:
    destination = posixpath.join(target, name)
    makedirs(posixpath.dirname(destination))
    rename(posixpath.join(source, name), destination)
  moved = {name: size(posixpath.join(target, name)) for name in names}
  if moved != sizes:
    raise OSError(f"{target}: moving {source} there lost or changed files")
  rmtree(source)


def copy(source: str, target: str, overwrite: bool = False) -> None:
  if is_local(source) and is_local(target):
    if not overwrite and os.path.exists(_local(target)):
      raise FileExistsError(errno.EEXIST, "File exists", target)
    shutil.copyfile(_local(source), _local(target))
    return
  with access(target):
    _tf().io.gfile.copy(source, target, overwrite=overwrite)


def remove(path: str) -> None:
  """Removes a file; nothing if it is already gone."""
  if is_local(path):
    with contextlib.suppress(FileNotFoundError):
      os.remove(_local(path))
    return
  tf = _tf()
  with access(path), contextlib.suppress(tf.errors.NotFoundError):
    tf.io.gfile.remove(path)


def rmtree(path: str) -> None:
  """Removes a directory and everything in it; nothing if it is gone."""
  if is_local(path):
    shutil.rmtree(_local(path), ignore_errors=True)
    return
  if not isdir(path):
    return
  if scheme(path) == "ram":
    _ram().rmtree(path)
    return
  tf = _tf()
  with access(path), contextlib.suppress(tf.errors.NotFoundError):
    tf.io.gfile.rmtree(path)


def remove_any(path: str) -> None:
  """Removes a file or a directory tree."""
  if isdir(path):
    rmtree(path)
  else:
    remove(path)


def check_writable_dir(path: str, what: str) -> None:
  """Refuses, before any work, a directory the run could not write.

  `path` may not exist yet (it is created when the first output is
  written): then its nearest existing parent must be a writable directory.
  Nothing is created. On a remote file system the path is looked up, so
  that missing credentials or a bucket without access are one line now
  (`RemoteAccessError`); write permission itself shows at the first write.

  Raises:
    InputError: `path` (or a parent) is a file, or not writable (permissions,
      a read-only file system); RemoteAccessError: see above.
  """
  if not is_local(path):
    if exists(path) and not isdir(path):
      raise InputError(f"{what} {path} is a file, not a directory")
    return
  existing = os.path.abspath(_local(path))
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
