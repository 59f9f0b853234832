"""`parse_gin`: layered gin files and bindings, failing in one clear line."""

import os
from typing import Iterable, Sequence

import gin

from official.errors import first_line


class GinConfigError(ValueError):
  """A gin file or binding cannot be used; the message says which and why."""


def parse_gin(
    gin_files: Sequence[str],
    gin_params: Sequence[str] = (),
    search_paths: Iterable[str] = (),
) -> None:
  """Parses `gin_files` in order, then `gin_params` (later values win).

  Args:
    gin_files: gin file paths; relative ones and their `include`s are found in
      the current directory or in `search_paths`.
    gin_params: single bindings such as `AlbertConfig.num_layers = 2`.
    search_paths: extra directories for files and includes (e.g. the repo root).

  Raises:
    GinConfigError: a missing file, a syntax error, an unknown configurable or
      parameter, or a bad value; the message names the file or binding.
  """
  for path in search_paths:
    gin.add_config_file_search_path(path)
  for gin_file in gin_files:
    if not _exists(gin_file, search_paths):
      raise GinConfigError(
          f"gin file {gin_file!r} not found (looked in the "
          "current directory and the repository root)"
      )
    try:
      gin.parse_config_file(gin_file)
    except (ValueError, SyntaxError, KeyError, TypeError, IOError) as e:
      raise GinConfigError(f"gin file {gin_file!r}: {first_line(e)}") from e
  for binding in gin_params:
    try:
      gin.parse_config(binding)
    except (ValueError, SyntaxError, KeyError, TypeError) as e:
      raise GinConfigError(f"gin binding {binding!r}: {first_line(e)}") from e


def _exists(path: str, search_paths: Iterable[str]) -> bool:
  return os.path.exists(path) or any(
      os.path.exists(os.path.join(root, path)) for root in search_paths
  )
