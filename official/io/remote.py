"""Paths on remote file systems, and their refusals as one line.

`scheme(path)` tells a local path ("" or `file`) from one on a file system
TensorFlow registers (`gs`, `s3`, `hdfs`, `ram`, ...). `access(path)` turns
a remote file system's refusal (no credentials, no permission, no network)
into one line naming the path and how to authenticate (`RemoteAccessError`).
"""

import contextlib
from typing import Iterator

from official.errors import InputError
from official.errors import op_message

# How to authenticate, by scheme.
_AUTH_ADVICE = {
    "gs": (
        "authenticate with `gcloud auth application-default login` or "
        "GOOGLE_APPLICATION_CREDENTIALS=KEY.json (on a Cloud TPU or GCE VM, "
        "give its service account access to the bucket)"
    ),
    "s3": (
        "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or an AWS profile) "
        "and AWS_REGION"
    ),
}


class RemoteAccessError(InputError):
  """A remote file system refused access or could not be reached."""


def scheme(path: str) -> str:
  """`gs` of `gs://bucket/x`; "" for a local path."""
  head, sep, _ = str(path).partition("://")
  return head if sep else ""


def is_local(path: str) -> bool:
  """A path on this machine's disks (plain or `file://`)."""
  return scheme(path) in ("", "file")


@contextlib.contextmanager
def access(path: str) -> Iterator[None]:
  """Turns a remote file system's refusal (credentials, permission, network)
  into one line (`RemoteAccessError`) naming `path`; other errors pass.
  (`ram://`, in this process's memory, refuses nothing.)"""
  if is_local(path) or scheme(path) == "ram":
    yield
    return
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  try:
    yield
  except tf.errors.OpError as e:
    refusals = (
        tf.errors.PermissionDeniedError,
        tf.errors.UnauthenticatedError,
        tf.errors.FailedPreconditionError,
        tf.errors.UnavailableError,
        tf.errors.DeadlineExceededError,
        tf.errors.AbortedError,
    )
    if not isinstance(e, refusals):
      raise
    advice = _AUTH_ADVICE.get(
        scheme(path),
        f"check the credentials and the network for {scheme(path)}://",
    )
    raise RemoteAccessError(
        f"cannot access {path}: {op_message(e)}; {advice}"
    ) from e
