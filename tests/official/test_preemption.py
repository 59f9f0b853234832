"""official/core/preemption.py: signals caught while training, in a
real process (the trainer's use:
tests/albert/pretraining/test_run_pretraining.py)."""

import signal
import subprocess
import sys
import time

import pytest

from official.core import preemption
from tests import helpers

# Enters a SignalWatch with the grace period argv[1], signals itself with
# argv[2:] in turn, and says what it saw after each.
_SCRIPT = r"""
import os, signal, sys, time
from official.core import preemption
watch = preemption.SignalWatch(float(sys.argv[1]))
try:
  with watch:
    assert not watch.poll()
    for name in sys.argv[2:]:
      os.kill(os.getpid(), getattr(signal, name))
      time.sleep(0.05)
      print(name, watch.poll(), watch.received, flush=True)
    time.sleep(3)
except preemption.Preempted as e:  # signalled, and nothing stopped: said so
  print("preempted:", e, flush=True)
print("left", flush=True)
assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
"""


def _run(grace, *signals):
  return subprocess.run(
      [sys.executable, "-c", _SCRIPT, str(grace), *signals],
      cwd=helpers.REPO,
      capture_output=True,
      text=True,
      timeout=60,
  )


def test_a_signal_is_seen_and_the_handlers_are_restored():
  run = _run(0, "SIGTERM")
  assert run.returncode == 0, run.stderr
  assert run.stdout.split("\n")[:3] == [
      f"SIGTERM True {signal.SIGTERM}",
      "preempted: stopped by SIGTERM after the last step was saved: run the "
      "same command again to finish",
      "left",
  ]
  assert (
      "SIGTERM received: finishing the loop in flight, then saving a "
      "checkpoint and stopping (no grace period limit)"
  ) in run.stderr


def test_past_the_grace_period_the_process_exits_as_signalled():
  run = _run(0.2, "SIGTERM")
  assert run.returncode == 128 + signal.SIGTERM, run.stderr
  assert "left" not in run.stdout
  assert "longer than the 0.2 s grace period" in run.stderr


def test_a_second_ctrl_c_interrupts_at_once():
  run = _run(0, "SIGINT", "SIGINT")
  # Python ends an uncaught KeyboardInterrupt as killed by SIGINT.
  assert run.returncode == -signal.SIGINT and "KeyboardInterrupt" in run.stderr
  assert run.stdout.startswith(f"SIGINT True {signal.SIGINT}\n")
  assert "left" not in run.stdout


def test_one_ctrl_c_read_first_from_the_wakeup_fd_is_one():
  """In training the loop's poll reads the signal's byte before Python's
  handler runs for the same SIGINT: that is still the first Ctrl-C."""
  # The handler before (Python's default, or SIG_IGN in a process started
  # in the background by a shell) is what the watch restores.
  before = signal.getsignal(signal.SIGINT)
  watch = preemption.SignalWatch(0)
  with pytest.raises(preemption.Preempted):
    with watch:
      watch._writer.send(bytes([signal.SIGINT]))  # what C's handler writes
      assert watch.poll() and watch.received == signal.SIGINT
      watch._handle(signal.SIGINT, None)  # the same signal: no interrupt
      with pytest.raises(KeyboardInterrupt):
        watch._handle(signal.SIGINT, None)  # a second Ctrl-C
  assert signal.getsignal(signal.SIGINT) is before


# Signals itself while the main thread is inside TensorFlow (a dataset that
# sleeps 20 s in C++, as a compiled training loop holds the thread), where
# Python's own handlers cannot run: the watch's thread sees the signals.
# argv[1]: the grace period ("auto": sized from time_left, 0.1 s left and a
# 0.1 s margin); argv[2:]: the signals.
_BUSY = r"""
import os, signal, sys, threading, time
import tensorflow as tf
from tensorflow.python.data.experimental.ops import testing
from official.core import preemption
preemption._GRACE_MARGIN_S = 0.1
grace = None if sys.argv[1] == "auto" else float(sys.argv[1])
watch = preemption.SignalWatch(grace, time_left=lambda: 0.1)
def send():
  time.sleep(1)
  for name in sys.argv[2:]:
    os.kill(os.getpid(), getattr(signal, name))
    time.sleep(0.2)
sleep = testing.sleep(20_000_000)  # microseconds
with watch:
  threading.Thread(target=send).start()
  started = time.time()
  next(iter(tf.data.Dataset.range(1).apply(sleep)))
print("returned", flush=True)
"""


def test_in_a_long_loop_the_signal_starts_the_sized_grace_period():
  run = helpers.run(["-c", _BUSY, "auto", "SIGTERM"], timeout=60)
  assert run.returncode == 128 + signal.SIGTERM, run.stderr[-2000:]
  assert "returned" not in run.stdout
  # Twice the 0.1 s the loop and a save should still take, plus 0.1 s.
  assert "SIGTERM received: finishing the loop in flight (about 0 s with " in (
      run.stderr
  )
  assert "took longer than the 0.3 s grace period" in run.stderr


def test_in_a_long_loop_a_second_ctrl_c_stops_at_once():
  started = time.monotonic()
  run = helpers.run(["-c", _BUSY, "0", "SIGINT", "SIGINT"], timeout=60)
  assert time.monotonic() - started < 15  # not the 20 s of the loop
  assert run.returncode == 128 + signal.SIGINT, run.stderr[-2000:]
  assert "interrupted twice: stopping now, without a checkpoint" in run.stderr
