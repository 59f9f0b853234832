"""ALBERT (Lan et al., ICLR 2020) for TensorFlow 2 / Keras 2."""

# Before any TensorFlow import: official/__init__.py sets TensorFlow's runtime
# defaults (oneDNN kernels on every x86 CPU), and TensorFlow's start-up log
# lines are kept off the first screen (official/quiet_start.py) unless
# --verbose or ALBERT_VERBOSE=1 asks for everything.
import official

import os as _os
import sys as _sys

from albert import environment as _environment

_foreign = _environment.foreign_official(official)
if _foreign:
  raise ImportError(_foreign)

from official import quiet_start as _quiet_start  # noqa: E402

_OFF = ("", "0", "false", "no", "off")
_quiet_start.install(
    verbose=_os.environ.get("ALBERT_VERBOSE", "").strip().lower() not in _OFF
    or any(
        a == "--verbose"
        or (a.startswith("--verbose=") and a[10:].lower() not in _OFF)
        for a in _sys.argv[1:]
    )
)
_environment.check_versions()
