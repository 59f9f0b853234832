"""ALBERT (Lan et al., ICLR 2020) for TensorFlow 2 / Keras 2."""

# Before any TensorFlow import: official/__init__.py sets TensorFlow's runtime
# defaults (oneDNN kernels on every x86 CPU), and TensorFlow's start-up log
# lines are kept off the first screen (official/quiet_start.py) unless
# --verbose or ALBERT_VERBOSE=1 asks for everything.
import official

import sys as _sys

from albert import environment as _environment

_foreign = _environment.foreign_official(official)
if _foreign:
  raise ImportError(_foreign)

from official import quiet_start as _quiet_start  # noqa: E402

_quiet_start.install(
    verbose=_environment.verbose_env()
    or _environment.verbose_argv(_sys.argv[1:])
)
_environment.check_versions()
