"""`official.io.files` and `atomic_write` on a file system without rename
of directories or local files: TensorFlow's `ram://`, the tests' stand-in
for an object store; and the rule that library modules reach files only
through them."""

import ast
import os
import pathlib
import uuid

import pytest
import tensorflow as tf

from official.errors import describe
from official.io import atomic_write
from official.io import files
from tests import helpers

ROOT = pathlib.Path(helpers.REPO)


def _ram(name: str) -> str:
  return f"ram://{name}-{uuid.uuid4().hex[:8]}"


def test_atomic_writes_on_ram_leave_the_files_and_nothing_else():
  root = _ram("atomic")
  path = f"{root}/model_config.json"
  atomic_write.write_atomic(path, "one")
  atomic_write.write_atomic_files({path: "two", f"{root}/b.bin": b"\x00\x01"})
  assert files.read_text(path) == "two"
  assert files.read_bytes(f"{root}/b.bin") == b"\x00\x01"
  with atomic_write.atomic_file(f"{root}/rows.csv", newline="") as f:
    f.write("a,b\r\n")
  assert files.read_bytes(f"{root}/rows.csv") == b"a,b\r\n"
  assert files.listdir(root) == ["b.bin", "model_config.json", "rows.csv"]


def test_a_failed_write_on_ram_leaves_the_old_file():
  root = _ram("failed")
  path = f"{root}/config.json"
  atomic_write.write_atomic(path, "old")
  with pytest.raises(ZeroDivisionError):
    with atomic_write.atomic_file(path) as f:
      f.write("half")
      raise ZeroDivisionError
  assert files.read_text(path) == "old"
  assert files.listdir(root) == ["config.json"]


def test_a_directory_on_ram_is_moved_file_by_file_and_checked():
  # ram:// renames files, not directories (as object stores, which rename
  # neither); a SavedModel directory still appears whole under its name.
  root = _ram("tree")
  target = f"{root}/export"
  with atomic_write.atomic_directory(target) as tmp:
    files.makedirs(f"{tmp}/variables")
    files.write_file(f"{tmp}/saved_model.pb", b"graph")
    files.write_file(f"{tmp}/variables/variables.index", b"index")
  assert files.listdir(root) == ["export"]
  assert files.walk_files(target) == [
      "saved_model.pb",
      "variables/variables.index",
  ]
  with pytest.raises(ValueError, match="exists: choose a new directory"):
    with atomic_write.atomic_directory(target):
      pass


def test_on_a_remote_file_system_another_process_temporary_is_stale():
  # No process table to ask there: one run writes a model directory.
  root = _ram("stale")
  path = f"{root}/operative_config.gin"
  other = f"{path}.tmp-{os.getpid() + 1}"
  files.write_file(other, "half")
  files.write_file(f"{path}.tmp-{os.getpid()}", "this process")
  assert atomic_write.stale_temporaries(path) == [other]
  atomic_write.write_atomic(path, "whole")
  assert files.listdir(root) == ["operative_config.gin"]


def test_text_reads_as_open_reads_it():
  root = _ram("text")
  files.write_file(f"{root}/a.csv", "\ufeffx,y\r\n1,2\r\n".encode())
  with files.open_text(f"{root}/a.csv", encoding="utf-8-sig", newline="") as f:
    assert f.read() == "x,y\r\n1,2\r\n"
  assert files.read_text(f"{root}/a.csv", encoding="utf-8-sig") == (
      "x,y\n1,2\n"
  )
  with pytest.raises(ValueError, match=r"^cannot read labels ram://"):
    files.read_bytes(f"{root}/missing", "labels")


@pytest.mark.parametrize(
    "error",
    [tf.errors.PermissionDeniedError, tf.errors.FailedPreconditionError],
)
def test_a_refused_object_store_is_one_line_naming_the_path(monkeypatch, error):
  def refuse(path):
    raise error(None, None, f"Error executing an HTTP request for {path}")

  monkeypatch.setattr(tf.io.gfile, "exists", refuse)
  with pytest.raises(files.RemoteAccessError) as raised:
    files.check_writable_dir("gs://bucket/runs/base", "model_dir")
  line = describe(raised.value)
  assert line.startswith(
      "cannot access gs://bucket/runs/base: Error executing an HTTP request"
  )
  assert "gcloud auth application-default login" in line
  assert "\n" not in line


# --- Library modules reach files through official/io ----------------------

# Calls on paths that bypass TensorFlow's file systems.
_OS_PATH = {
    "exists",
    "lexists",
    "isdir",
    "isfile",
    "islink",
    "getsize",
    "getmtime",
    "realpath",
    "abspath",
    "samefile",
}
_OS = {
    "makedirs",
    "mkdir",
    "remove",
    "unlink",
    "replace",
    "rename",
    "listdir",
    "scandir",
    "walk",
    "stat",
    "rmdir",
}
_MODULES = {"shutil", "glob", "tempfile"}
# Modules whose files are local by nature, and why. Anything else that
# needs a local-only call says why on the line before it: `# local-only:`.
LOCAL_BY_NATURE = {
    "official/io/files.py": "the file-system module itself",
    "official/core/run_lock.py": "flock locks exist on local disks and NFS",
    "official/quiet_start.py": "this process's own file descriptors",
    "official/benchmark/": "/proc and this machine's processes",
    "official/config/gin_files.py": "gin-config reads gin files itself",
    "official/io/tfrecord.py": "the data tools' local shards",
    "official/io/download.py": "a download lands in a local file (a .part)",
    "albert/registry/": "the model cache: a local directory, flock locks",
    "albert/configs.py": "the package's own gin directory",
    "albert/pretraining_data/": (
        "the data tools read a local corpus and write local shards (their "
        "Beam pipeline writes through Beam's file systems)"
    ),
    "albert/checkpoint_conversion/": (
        "other libraries' local downloads and writers; a remote "
        "--output_dir is refused in one line"
    ),
    "albert/benchmarks/": "measurements on this machine",
    "albert/experiments/": "ablation runs on this machine",
    "albert/cli/demo.py": "the demo's local work directory",
    "albert/cli/make_sample_corpus.py": "writes a local sample corpus",
    "albert/cli/benchmark_data.py": "measurements on this machine",
    "albert/cli/compare_serving_precision.py": "a local scratch export",
    "albert/finetuning/own_data/sample_data.py": "writes a local sample set",
}


def _file_calls(path: pathlib.Path):
  lines = path.read_text().splitlines()
  for node in ast.walk(ast.parse("\n".join(lines))):
    if not isinstance(node, ast.Call):
      continue
    func, name = node.func, None
    if isinstance(func, ast.Name) and func.id == "open":
      name = "open"
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
      owner = func.value.id
      if (owner == "os" and func.attr in _OS) or owner in _MODULES:
        name = f"{owner}.{func.attr}"
    elif (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Attribute)
        and isinstance(func.value.value, ast.Name)
        and (func.value.value.id, func.value.attr) == ("os", "path")
        and func.attr in _OS_PATH
    ):
      name = f"os.path.{func.attr}"
    if name is None:
      continue
    before = lines[node.lineno - 2] if node.lineno > 1 else ""
    if "# local-only:" in before or "# local-only:" in lines[node.lineno - 1]:
      continue
    yield node.lineno, name


def test_library_modules_reach_files_through_official_io():
  """A model directory, data pattern, fine-tuning data_dir or feature cache
  may be gs:// (or any TensorFlow file system): library modules reach files
  through `official.io.files` and `atomic_write`, which use tf.io.gfile."""
  modules = sorted(ROOT.glob("albert/**/*.py")) + sorted(
      ROOT.glob("official/**/*.py")
  )
  assert len(modules) > 100
  offenders = []
  for path in modules:
    relative = str(path.relative_to(ROOT))
    if any(relative.startswith(prefix) for prefix in LOCAL_BY_NATURE):
      continue
    offenders += [f"{relative}:{n}: {call}" for n, call in _file_calls(path)]
  assert not offenders, "\n".join(offenders)


def test_the_rule_sees_a_local_call(tmp_path):
  module = tmp_path / "m.py"
  module.write_text(
      "import os, glob\n"
      "def f(p):\n"
      "  if os.path.exists(p):\n"
      "    return open(p).read() + str(glob.glob(p))\n"
      "  # local-only: the process table.\n"
      "  return open('/proc/1/stat').read()\n"
  )
  assert sorted(_file_calls(module)) == [
      (3, "os.path.exists"),
      (4, "glob.glob"),
      (4, "open"),
  ]


def test_without_rename_files_are_written_whole_or_not_at_all(monkeypatch):
  # An object store renames nothing (ram:// renames files): each file is
  # written under its own name in one upload, and checked for its size.
  monkeypatch.setattr(files, "renames_atomically", lambda path: False)
  root = _ram("objects")
  atomic_write.write_atomic_files(
      {f"{root}/a.json": "{}", f"{root}/b.bin": b"\x00" * 3}
  )
  with pytest.raises(ZeroDivisionError):
    with atomic_write.atomic_file(f"{root}/half.csv") as f:
      f.write("a,b\n")
      raise ZeroDivisionError
  with atomic_write.atomic_file(f"{root}/whole.csv", newline="") as f:
    f.write("a,b\r\n")
  assert files.listdir(root) == ["a.json", "b.bin", "whole.csv"]
  assert files.read_bytes(f"{root}/whole.csv") == b"a,b\r\n"
  assert files.size(f"{root}/b.bin") == 3


def test_local_files_need_no_tensorflow(tmp_path):
  # The data tools' worker processes write their shards through these
  # modules; importing TensorFlow in each would cost seconds per process.
  script = (
      "import sys\n"
      "from official.io import atomic_write, files\n"
      "d = sys.argv[1]\n"
      "atomic_write.write_atomic(d + '/a.json', '{}')\n"
      "assert files.listdir(d) == ['a.json'] and files.glob(d + '/*.json')\n"
      "assert 'tensorflow' not in sys.modules, 'tensorflow was imported'\n"
  )
  run = helpers.run(["-c", script, str(tmp_path)], fork=False)
  assert run.returncode == 0, run.stderr[-2000:]
