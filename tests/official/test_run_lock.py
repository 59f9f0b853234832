"""official/core/run_lock.py: one training run per model directory."""

import json
import os
import signal
import subprocess
import sys

from unittest import mock

import pytest

from official.core import run_lock
from tests import helpers

# A process that holds the lock of argv[1] until it is killed.
_HOLDER = r"""
import sys, time
from official.core import run_lock
with run_lock.hold(sys.argv[1]):
  print("held", flush=True)
  time.sleep(600)
"""


def _start_holder(model_dir):
  process = subprocess.Popen(
      [sys.executable, "-c", _HOLDER, str(model_dir)],
      cwd=helpers.REPO,
      stdout=subprocess.PIPE,
      text=True,
  )
  assert process.stdout.readline().strip() == "held"
  return process


def test_held_for_the_run_and_removed_after(tmp_path):
  model_dir = tmp_path / "run"
  path = run_lock.lock_path(str(model_dir))
  assert path == str(model_dir / ".lock")  # a new model_dir is made for it
  with run_lock.hold(str(model_dir)):
    with open(path, encoding="utf-8") as f:
      holder = json.load(f)
    assert holder["pid"] == os.getpid() and holder["host"]
  assert os.listdir(model_dir) == []


def test_a_second_run_refuses_naming_the_holder(tmp_path):
  model_dir = tmp_path / "run"
  model_dir.mkdir()
  holder = _start_holder(model_dir)
  try:
    # Another spelling of the same directory finds the same lock.
    for spelling in (model_dir, f"{tmp_path}/./run/"):
      with pytest.raises(run_lock.ModelDirLockedError) as e:
        with run_lock.hold(str(spelling)):
          pytest.fail("entered a held lock")
      message = str(e.value)
      assert "\n" not in message
      assert f"model_dir {spelling} is in use by another run (pid " in message
      assert f"pid {holder.pid} on " in message
      assert message.endswith("or choose another model_dir")
    assert os.listdir(model_dir) == [".lock"]  # the holder's, untouched
  finally:
    holder.kill()
    holder.wait()


def test_the_lock_of_a_killed_run_is_taken_over_with_a_warning(tmp_path):
  model_dir = tmp_path / "run"
  holder = _start_holder(model_dir)
  holder.send_signal(signal.SIGKILL)  # no clean-up: the file stays
  holder.wait()
  path = run_lock.lock_path(str(model_dir))
  assert json.load(open(path, encoding="utf-8"))["pid"] == holder.pid
  with mock.patch.object(run_lock.logging, "warning") as warning:
    with run_lock.hold(str(model_dir)):
      assert json.load(open(path, encoding="utf-8"))["pid"] == os.getpid()
  (call,) = warning.call_args_list
  assert "ended without releasing it" in call.args[0]
  assert f"pid {holder.pid} on" in call.args[2]
  assert not os.path.exists(path)


def test_an_object_store_locks_nothing():
  with mock.patch.object(run_lock.logging, "warning") as warning:
    with run_lock.hold("gs://bucket/run"):
      pass
  assert "not locked" in warning.call_args.args[0]


def test_racing_runs_one_wins(tmp_path):
  """Processes started at once: exactly one holds the lock. The winner
  keeps it until every other one has tried (however slowly it started)."""
  racer = r"""
import os, sys, time
from official.core import run_lock
try:
  with run_lock.hold(sys.argv[1]):
    print("won", flush=True)
    while not os.path.exists(sys.argv[2]):
      time.sleep(0.01)
except run_lock.ModelDirLockedError:
  print("refused", flush=True)
"""
  release = tmp_path / "release"
  racers = [
      subprocess.Popen(
          [sys.executable, "-c", racer, str(tmp_path / "run"), str(release)],
          cwd=helpers.REPO,
          stdout=subprocess.PIPE,
          text=True,
      )
      for _ in range(4)
  ]
  try:
    results = sorted(p.stdout.readline().strip() for p in racers)
  finally:
    release.touch()
    for p in racers:
      p.communicate(timeout=60)
  assert results == ["refused"] * 3 + ["won"], results
