"""Command-line programs: flags, one call into the library, one-line errors.

Each module has `main(argv)` (for `absl.app`) and `run()`; `tools/<name>.py`
and the console scripts in `pyproject.toml` call `run()`.

Every program goes through `run_command`, the one error path: a user error or
an environment fault (`official.errors.describe`) prints one line,
`PROGRAM: error: ...`, and exits with status 1 (130 when interrupted); a
training run stopped by SIGTERM or SIGINT after saving prints `PROGRAM:
stopped: ...` and exits with 75 (`official.core.preemption`); a
programming error shows its traceback. `--verbose` (or ALBERT_VERBOSE=1)
shows the traceback of every error.
"""

import gc
import os
import sys

from absl import app
from absl import flags
from absl import logging

from albert import environment
from official import errors
from official.errors import InputError

VERBOSE = flags.DEFINE_bool(
    "verbose",
    False,
    "On an error, show the full traceback instead of one line (also "
    "ALBERT_VERBOSE=1).",
)
VERBOSE_ENV = environment.VERBOSE_ENV


def require_flags(*names: str) -> None:
  """Raises InputError naming the first of `names` that is not set, with the
  first sentence of its help: `--model_dir is required (Checkpoints, ...)`.

  The one check of required flags: every command calls it first.
  """
  for name in names:
    flag = flags.FLAGS[name]
    if not flag.value:
      what = (flag.help or "").split(". ")[0].rstrip(".")
      raise InputError(f"--{name} is required ({what})")


def verbose() -> bool:
  """Whether errors show their traceback (--verbose or ALBERT_VERBOSE=1)."""
  if environment.verbose_env():
    return True
  return bool(flags.FLAGS.is_parsed() and VERBOSE.value)


def guarded(main, program: str):
  """`main` with the one error path: known errors become one line, exit 1."""

  def wrapped(argv):
    try:
      return main(argv)
    except (SystemExit, app.UsageError):
      raise
    except BaseException as e:  # pylint: disable=broad-except
      message = None if verbose() else errors.describe(e)
      if message is None:
        raise
      _release(e)
      logging.flush()
      sys.stderr.flush()
      label = "stopped" if isinstance(e, errors.Preempted) else "error"
      print(f"{program}: {label}: {message}", file=sys.stderr, flush=True)
      # Whatever TensorFlow would log while the process exits (e.g. about a
      # restore that failed) would come after the one line.
      logging.set_verbosity(logging.FATAL)
      if isinstance(e, KeyboardInterrupt):
        sys.exit(130)
      sys.exit(getattr(e, "exit_code", 1))

  return wrapped


def _release(error: BaseException) -> None:
  """Frees what the error's frames hold (a half-restored checkpoint logs
  warnings when it is collected), so that it happens before the one line."""
  seen = set()
  while error is not None and id(error) not in seen:
    seen.add(id(error))
    error.__traceback__ = None
    error = error.__cause__ or error.__context__
  gc.collect()


def unexpected_arguments(argv) -> None:
  """Raises InputError for positional arguments (every flag is --name=value)."""
  if len(argv) > 1:
    raise InputError(
        f"unexpected arguments: {' '.join(argv[1:])}; flags are "
        "--name=value (--helpshort lists them)"
    )


def run_command(main, usage: str) -> None:
  """Runs `main` under absl with `usage` as the --help text.

  absl prints the `__main__` module's docstring; whichever script started
  the process (tools/*.py, a console script, `python -m`), the text is the
  command module's own.
  """
  sys.modules["__main__"].__doc__ = usage
  # --helpshort lists the key flags of the script that started the process;
  # the command's flags are defined in its module here, so they are made
  # key flags of that script too.
  defined = flags.FLAGS.flags_by_module_dict()
  for flag in defined.get(main.__module__, []) + defined.get(__name__, []):
    flags.FLAGS.register_key_flag_for_module(sys.argv[0], flag)
  program = main.__module__.rsplit(".", 1)[-1]
  if program == "__main__":
    program = os.path.splitext(os.path.basename(sys.argv[0]))[0]
  app.run(guarded(main, program))
