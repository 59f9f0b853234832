"""Command-line programs: flags, one call into the library, one-line errors.

Each module has `main(argv)` (for `absl.app`) and `run()`; `tools/<name>.py`
and the console scripts in `pyproject.toml` call `run()`.
"""

import sys

from absl import app
from absl import flags

from official.core.errors import InputError


def require_flags(*names: str) -> None:
  """Raises InputError naming the first of `names` that is not set."""
  for name in names:
    if not flags.FLAGS[name].value:
      raise InputError(f"--{name} is required")


def run_command(main, usage: str) -> None:
  """Runs `main` under absl with `usage` as the --help text.

  absl prints the `__main__` module's docstring; whichever script started
  the process (tools/*.py, a console script, `python -m`), the text is the
  command module's own.
  """
  sys.modules["__main__"].__doc__ = usage
  app.run(main)
