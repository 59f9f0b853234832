"""`official.io.atomic_write`: complete files or none, and no trace of a
writer that was killed mid-write."""

import os

import pytest

from official.errors import InputError
from official.io import atomic_write
from tests import helpers


def _dead_pid() -> int:
  """The pid of a process that has ended (and been reaped)."""
  process = helpers.start(["-c", "pass"])
  process.wait()
  return process.pid


def test_write_leaves_the_file_and_nothing_else(tmp_path):
  path = tmp_path / "config.json"
  atomic_write.write_atomic(str(path), "one")
  atomic_write.write_atomic(str(path), "two")
  assert path.read_text() == "two"
  assert os.listdir(tmp_path) == ["config.json"]


def test_a_failed_write_leaves_the_old_file(tmp_path):
  path = tmp_path / "config.json"
  atomic_write.write_atomic(str(path), "old")
  with pytest.raises(ZeroDivisionError):
    with atomic_write.atomic_file(str(path)) as f:
      f.write("half")
      raise ZeroDivisionError
  assert path.read_text() == "old"
  assert os.listdir(tmp_path) == ["config.json"]


def test_a_killed_writers_temporary_goes_with_the_next_write(tmp_path):
  path = tmp_path / "operative_config.gin"
  dead = tmp_path / f"operative_config.gin.tmp-{_dead_pid()}"
  dead.write_text("half a config")
  # A writer that is still running (this test's parent) keeps its temporary.
  alive = tmp_path / f"operative_config.gin.tmp-{os.getppid()}"
  alive.write_text("being written")
  assert atomic_write.stale_temporaries(str(path)) == [str(dead)]
  atomic_write.write_atomic_files({str(path): "whole"})
  assert sorted(os.listdir(tmp_path)) == sorted([path.name, alive.name])
  assert path.read_text() == "whole"


def test_stale_temporaries_of_a_directory_are_removed_by_name(tmp_path):
  # Files this run will not write again: only the directory sweep finds them.
  pid = _dead_pid()
  for name in ("model_config.json", "labels.json"):
    (tmp_path / f"{name}.tmp-{pid}").write_text("{")
  (tmp_path / f"export.tmp-{pid}").mkdir()
  (tmp_path / "notes.tmp-draft").write_text("not ours: no pid")
  atomic_write.remove_stale_temporaries_in(str(tmp_path))
  assert os.listdir(tmp_path) == ["notes.tmp-draft"]


def test_atomic_directory_replaces_a_dead_writers_directory(tmp_path):
  target = tmp_path / "export"
  leftover = tmp_path / f"export.tmp-{_dead_pid()}"
  leftover.mkdir()
  (leftover / "saved_model.pb").write_bytes(b"half")
  with atomic_write.atomic_directory(str(target)) as tmp:
    with open(os.path.join(tmp, "saved_model.pb"), "wb") as f:
      f.write(b"whole")
  assert os.listdir(tmp_path) == ["export"]
  assert (target / "saved_model.pb").read_bytes() == b"whole"


def test_wait_for_writers_waits_for_a_live_writer_then_refuses(tmp_path):
  # A writer that is still running (a killed run's worker finishing, or
  # another run) is waited for; one that outlives the wait is refused.
  writer = helpers.start(["-c", "import time; time.sleep(60)"])
  try:
    tmp = str(tmp_path / f"part.rec.tmp-{writer.pid}")
    with pytest.raises(InputError, match=f"process {writer.pid} is still"):
      atomic_write.wait_for_writers([tmp], timeout=0.3)
  finally:
    writer.kill()
    writer.wait()
  atomic_write.wait_for_writers([tmp], timeout=0.3)  # gone: returns
  # This process's own temporaries are never waited for.
  atomic_write.wait_for_writers([f"x.tmp-{os.getpid()}"], timeout=0)
