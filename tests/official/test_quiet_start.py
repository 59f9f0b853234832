"""TensorFlow's start-up lines stay off a command's first screen
(official/quiet_start.py); --verbose and ALBERT_VERBOSE=1 bring them back."""

import os

from official import quiet_start
from tests import helpers

# Lines TensorFlow 2.21 printed here while starting (CPU machine, no GPU).
NOISE = [
    "WARNING: All log messages before absl::InitializeLog() is called are "
    "written to STDERR\n",
    "I0000 00:00:1795617260.669504   25282 port.cc:153] oneDNN custom "
    "operations are on.\n",
    "E0000 00:00:1795617266.703651   25282 cuda_platform.cc:52] failed call "
    "to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR\n",
    "To enable the following instructions: AVX2 FMA, in other operations, "
    "rebuild TensorFlow with the appropriate compiler flags.\n",
]
KEPT = "UserWarning: something a library said while TensorFlow loaded\n"


def test_noise_is_dropped_and_other_lines_are_written_out(capfd):
  with quiet_start._captured_stderr() as done:
    os.write(2, "".join(NOISE[:2] + [KEPT] + NOISE[2:]).encode())
    done.append(True)
  assert capfd.readouterr().err == KEPT


def test_a_failed_import_shows_everything(capfd):
  try:
    with quiet_start._captured_stderr():
      os.write(2, "".join(NOISE).encode())
      raise ImportError("libtensorflow_framework.so.2: cannot open")
  except ImportError:
    pass
  assert capfd.readouterr().err == "".join(NOISE)


def _summary(**env):
  clean = {
      k: v
      for k, v in helpers.ENV.items()
      if k not in ("TF_CPP_MIN_LOG_LEVEL", "ALBERT_VERBOSE")
  }
  return helpers.run(
      ["tools/model_summary.py", "--gin_file=gin/tiny.gin"],
      env={**clean, **env},
      timeout=300,
  )


def test_a_command_starts_quietly_unless_asked():
  quiet = _summary()
  assert quiet.returncode == 0, quiet.stderr[-3000:]
  assert quiet.stdout.startswith("ALBERT V="), quiet.stdout[:500]
  assert not [
      l
      for l in quiet.stderr.splitlines(True)
      if quiet_start.is_startup_noise(l)
  ], quiet.stderr[-3000:]
  loud = _summary(ALBERT_VERBOSE="1")
  assert loud.returncode == 0, loud.stderr[-3000:]
  assert [
      l for l in loud.stderr.splitlines(True) if quiet_start.is_startup_noise(l)
  ], loud.stderr[-3000:]
  assert loud.stdout == quiet.stdout
