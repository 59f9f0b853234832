"""Checks of the installation, run when `albert` is imported: one line on
stderr for what would otherwise surface later as an obscure error.

- TensorFlow, tf-keras and tensorflow-text are built together: their
  major.minor versions must agree. A tensorflow-text built for another
  TensorFlow fails with "op not registered" or undefined-symbol errors.
- `official` is also the name of tf-models-official's top-level package. The
  two cannot share one environment: the second install overwrites the first's
  files (`import official` then finds the other package, or a mix of both).
"""

import importlib.metadata
import os
import sys
from typing import Dict, Optional

# TensorFlow's distribution names (the CPU-only, nightly and macOS builds).
_TENSORFLOW = ("tensorflow", "tensorflow-cpu", "tf-nightly", "tensorflow-macos")
_LOCKSTEP = ("tf-keras", "tensorflow-text")


VERBOSE_ENV = "ALBERT_VERBOSE"
_OFF = ("", "0", "false", "no", "off")


def verbose_env() -> bool:
  """Whether ALBERT_VERBOSE asks for everything (tracebacks, start-up
  lines)."""
  return os.environ.get(VERBOSE_ENV, "").strip().lower() not in _OFF


def verbose_argv(argv) -> bool:
  """Whether `argv` holds --verbose (or --verbose=true), before flags are
  parsed."""
  return any(
      a == "--verbose"
      or (a.startswith("--verbose=") and a[10:].lower() not in _OFF)
      for a in argv
  )


def installed_versions() -> Dict[str, str]:
  """Versions of TensorFlow and its lock-step packages, by distribution name
  (read from their metadata: nothing is imported)."""
  versions = {}
  for name in (*_TENSORFLOW, *_LOCKSTEP):
    try:
      versions[name] = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
      pass
  return versions


def _minor(version: str) -> str:
  return ".".join(version.split(".")[:2])


def version_mismatch(versions: Dict[str, str]) -> Optional[str]:
  """One line if a lock-step package does not match TensorFlow, else None."""
  tf_name = next((n for n in _TENSORFLOW if n in versions), None)
  if tf_name is None:
    return None
  tf_version = versions[tf_name]
  for name in _LOCKSTEP:
    if name in versions and _minor(versions[name]) != _minor(tf_version):
      return (
          f"albert: {tf_name} {tf_version} and {name} {versions[name]} do not "
          f"match (their major.minor versions must agree, or ops fail to "
          f"load); fix: pip install '{name}=={_minor(tf_version)}.*'"
      )
  return None


def foreign_official(official_module) -> Optional[str]:
  """One line if `official` is not this distribution's package, else None."""
  if getattr(official_module, "ALBERT_TF2", False):
    return None
  where = os.path.dirname(getattr(official_module, "__file__", None) or "?")
  return (
      f"albert: the 'official' package at {where} is not albert-tf2's "
      "(tf-models-official installs a package of the same name, and one "
      "overwrites the other); install albert-tf2 in its own virtual "
      "environment: python -m venv .venv && .venv/bin/pip install albert-tf2"
  )


def check_versions() -> None:
  """Writes `version_mismatch`'s line to stderr, if any."""
  message = version_mismatch(installed_versions())
  if message:
    print(message, file=sys.stderr, flush=True)
