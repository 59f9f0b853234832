"""`parse_gin`: layered gin files and bindings, failing in one clear line."""

import contextlib
import difflib
import inspect
import logging
import os
import re
from typing import Iterable, List, Optional, Sequence

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
    search_paths: extra directories for files and includes (e.g. where a
      package keeps its recipes).

  Raises:
    GinConfigError: a missing file, a syntax error, an unknown configurable or
      parameter, or a bad value; the message names the file or binding.
  """
  for path in search_paths:
    gin.add_config_file_search_path(path)
  with _quiet_search():
    _parse(gin_files, gin_params, search_paths)


def _parse(gin_files, gin_params, search_paths) -> None:
  for gin_file in gin_files:
    if not _exists(gin_file, search_paths):
      places = [os.getcwd(), *search_paths]
      raise GinConfigError(
          f"gin file {gin_file!r} not found (looked in "
          f"{', '.join(places)}); give a path to an existing file"
      )
    try:
      gin.parse_config_file(gin_file)
    except (ValueError, SyntaxError, KeyError, TypeError, IOError) as e:
      raise GinConfigError(f"gin file {gin_file!r}: {_describe(e)}") from e
  for binding in gin_params:
    try:
      gin.parse_config(binding)
    except (ValueError, SyntaxError, KeyError, TypeError) as e:
      raise GinConfigError(f"gin binding {binding!r}: {_describe(e)}") from e


def _describe(error: BaseException) -> str:
  """gin's reason, with "; did you mean 'X'?" for an unknown configurable
  or parameter whose name is close to a known one."""
  text = first_line(error)
  hint = _suggestion(text)
  return text.rstrip(".") + hint if hint else text


def _suggestion(text: str) -> str:
  """The hint of `_describe`, or "" when nothing known is close."""
  unknown = re.search(r"No configurable matching '([^']+)'", text)
  if unknown:
    name, known = unknown.group(1), _configurables()
  else:
    param = re.search(
        r"Configurable '([^']+)' doesn't have a parameter named '([^']+)'",
        text,
    )
    if not param:
      return ""
    name, known = param.group(2), _parameters(param.group(1))
  close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
  return f"; did you mean {close[0]!r}?" if close else ""


def _registry():
  # gin has no public listing of what is registered; without it, no hint.
  return getattr(getattr(gin, "config", None), "_REGISTRY", None)


def _configurables() -> List[str]:
  registry = _registry()
  if registry is None:
    return []
  names = set()
  for selector, _ in registry.items():
    names.add(selector.split(".")[-1])
    names.add(registry.minimal_selector(selector))
  return sorted(names)


def _parameters(selector: str) -> List[str]:
  registry = _registry()
  configurable = registry.get_match(selector) if registry else None
  target: Optional[object] = getattr(configurable, "wrapped", None)
  if target is None:
    return []
  try:
    signature = inspect.signature(target)
  except (TypeError, ValueError):
    return []
  return [p for p in signature.parameters if p not in ("self", "cls")]


def _not_a_search_miss(record: logging.LogRecord) -> bool:
  """False for gin's notes on its search: "system_path_file_exists" (INFO)
  and "Path not found" (ERROR) for every search path that does not hold the
  file, before the one that does."""
  return not (
      os.path.basename(record.pathname) == "resource_reader.py"
      and record.getMessage().startswith(
          ("Path not found: ", "system_path_file_exists:")
      )
  )


@contextlib.contextmanager
def _quiet_search():
  root = logging.getLogger()
  root.addFilter(_not_a_search_miss)
  try:
    yield
  finally:
    root.removeFilter(_not_a_search_miss)


def _exists(path: str, search_paths: Iterable[str]) -> bool:
  return os.path.exists(path) or any(
      os.path.exists(os.path.join(root, path)) for root in search_paths
  )
