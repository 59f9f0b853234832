"""`ram://`, TensorFlow's in-memory file system, with directories that mean
what they mean elsewhere (`official.io.files` calls this for `ram://`).

The tests use `ram://` as the stand-in for an object store (the same
`tf.io.gfile` calls as `gs://`). It matches names by prefix, though: there
`ram://d/ckpt-2` "exists", as a directory, beside `ram://d/ckpt-2.index`;
`ram://d/eval` lists `_history.jsonl` of `ram://d/eval_history.jsonl`; and
its own `makedirs` and `rmtree` skip or remove such prefixes. A file's
`stat` is exact; a directory here is one that its parent lists and `stat`
calls one.
"""

import posixpath
from typing import List

import tensorflow as tf

_ROOTS = ("ram:", "ram:/")


def _is_file(path: str) -> bool:
  try:
    return not tf.io.gfile.stat(path).is_directory
  except tf.errors.NotFoundError:
    return False


def isdir(path: str) -> bool:
  path = path.rstrip("/")
  try:
    if not tf.io.gfile.stat(path).is_directory:
      return False
  except tf.errors.NotFoundError:
    return False
  parent, name = posixpath.split(path)
  if parent in _ROOTS:  # a top-level name: no parent to ask
    return True
  return isdir(parent) and name in _names(parent)


def exists(path: str) -> bool:
  return _is_file(path) or isdir(path)


def _names(path: str) -> List[str]:
  return [n.rstrip("/") for n in tf.io.gfile.listdir(path)]


def listdir(path: str) -> List[str]:
  directory = path.rstrip("/")
  return sorted(n for n in _names(path) if exists(posixpath.join(directory, n)))


def makedirs(path: str) -> None:
  parent = posixpath.dirname(path.rstrip("/"))
  if parent not in _ROOTS and not isdir(parent):
    makedirs(parent)
  if not isdir(path):
    tf.io.gfile.mkdir(path)


def rmtree(path: str) -> None:
  directory = path.rstrip("/")
  for name in listdir(directory):
    inner = posixpath.join(directory, name)
    if isdir(inner):
      rmtree(inner)
    else:
      tf.io.gfile.remove(inner)
  tf.io.gfile.remove(directory)
