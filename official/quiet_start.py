"""TensorFlow's start-up lines kept off a program's first screen.

Loading TensorFlow prints C++ log lines straight to file descriptor 2, before
any setting can stop them: "All log messages before absl::InitializeLog()",
"Could not find cuda drivers", CPU feature notes, and on every machine
without a GPU an `E... failed call to cuInit` that reads like a failure.
`install()` (call it before TensorFlow is imported) does two things:

- sets `TF_CPP_MIN_LOG_LEVEL` to 2 (errors only) unless the environment sets
  it, which quiets TensorFlow's later C++ warnings (e.g. about the end of a
  dataset);
- the first `import tensorflow` runs with descriptor 2 captured; TensorFlow's
  C++ log lines are dropped and everything else written meanwhile (a Python
  warning, a message of another library) is written out afterwards. If the
  import fails, everything captured is written out.

`install(verbose=True)` changes nothing, so every line shows.
"""

import contextlib
import importlib.abc
import importlib.util
import os
import re
import sys
import tempfile

# A C++ log line (absl's and TensorFlow's format: level letter, date, time,
# thread, file:line]), absl's notice before it is initialised, and the
# continuation of the CPU feature note.
_NOISE = re.compile(
    r"^(?:[IWE]\d{4} \d\d:\d\d:\d+\.\d+\s+\d+ \S+:\d+\] "
    r"|WARNING: All log messages before absl::InitializeLog\(\) "
    r"|To enable the following instructions: )"
)


def is_startup_noise(line: str) -> bool:
  """Whether `line` is one of TensorFlow's start-up log lines."""
  return bool(_NOISE.match(line))


def install(verbose: bool = False) -> None:
  """Quiets TensorFlow's start-up; see the module docstring."""
  if verbose or "tensorflow" in sys.modules:
    return
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  if not any(isinstance(f, _Finder) for f in sys.meta_path):
    sys.meta_path.insert(0, _Finder())


class _Finder(importlib.abc.MetaPathFinder):
  """Finds `tensorflow` once, through the other finders, and wraps its
  loader."""

  def find_spec(self, fullname, path, target=None):
    if fullname != "tensorflow":
      return None
    sys.meta_path.remove(self)
    spec = importlib.util.find_spec(fullname)
    if spec is not None and spec.loader is not None:
      spec.loader = _QuietLoader(spec.loader)
    return spec


class _QuietLoader(importlib.abc.Loader):
  """The package's own loader, run with descriptor 2 captured."""

  def __init__(self, loader):
    self._loader = loader

  def __getattr__(self, name):
    return getattr(self._loader, name)

  def create_module(self, spec):
    return self._loader.create_module(spec)

  def exec_module(self, module):
    with _captured_stderr() as captured:
      self._loader.exec_module(module)
      # The platforms load on first use; on a machine without a GPU, CUDA's
      # "failed call to cuInit" comes then.
      module.config.list_physical_devices()
      captured.append(True)  # finished: only the noise is dropped


@contextlib.contextmanager
def _captured_stderr():
  done = []
  try:
    sys.stderr.flush()
  except (AttributeError, ValueError):
    pass
  saved = os.dup(2)
  with tempfile.TemporaryFile() as file:
    os.dup2(file.fileno(), 2)
    try:
      yield done
    finally:
      try:
        sys.stderr.flush()
      except (AttributeError, ValueError):
        pass
      os.dup2(saved, 2)
      os.close(saved)
      file.seek(0)
      text = file.read().decode("utf-8", "replace")
      lines = text.splitlines(keepends=True)
      if done:
        lines = [l for l in lines if not is_startup_noise(l)]
      if lines:
        sys.stderr.write("".join(lines))
        sys.stderr.flush()
