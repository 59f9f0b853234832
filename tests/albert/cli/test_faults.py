"""Fault injection across the command-line tools, as a user meets faults.

Each fault class of the error path (`albert/cli/__init__.py`): truncated and
corrupted records and checkpoints (a shard cut inside its last header too),
a model directory that is a file, holds another model or is held by another
run, a read-only directory, a full disk (a file-size limit: `ulimit -f`,
which needs no privileges), kill -9. Every case checks the exit code, one
`PROGRAM: error:` line and no traceback, that nothing partial is left, and
that no byte of what was there before changed. (SIGTERM's save and bit-exact
resume: tests/albert/pretraining/test_run_pretraining.py; hostile serving
requests: tests/albert/serving/hostile.py, run on every raw-text export.)
"""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
import tensorflow as tf

from official.core import checkpoint_damage
from official.io import tfrecord
from tests.albert.synthetic_records import write_records
from tests.albert.pretraining.test_run_pretraining import _args
from tests.helpers import ENV
from tests.helpers import assert_one_line
from tests.helpers import run as run_from_repo
from tests.helpers import start as start_from_repo
from tests.helpers import REPO

pytestmark = pytest.mark.slow


# Sets a file-size limit (`ulimit -f`), then becomes the command: writes past
# it fail with EFBIG, as on a full disk (Python ignores SIGXFSZ, and so does
# the command it execs).
_LIMITED = (
    "import os, resource, sys; n = int(sys.argv[1]); "
    "resource.setrlimit(resource.RLIMIT_FSIZE, (n, n)); "
    "os.execv(sys.argv[2], sys.argv[2:])"
)
# Makes DIR a read-only mount in a private mount namespace, then becomes the
# command: writes below DIR fail with EROFS, whoever runs it (root too).
_READ_ONLY = (
    'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
)


def _run(args, *, limit_bytes=None, read_only=None, extra_env=None):
  """Runs `args` from the repository root; optionally with a file-size limit
  or with the directory `read_only` on a read-only mount."""
  args = [str(a) for a in args]
  if limit_bytes is not None:
    args = [sys.executable, "-c", _LIMITED, str(limit_bytes)] + args
  if read_only is not None:
    args = ["unshare", "-rm", "sh", "-c", _READ_ONLY, str(read_only)] + args
  return run_from_repo(args, env=dict(ENV, **(extra_env or {})))


@pytest.fixture(scope="module")
def read_only_mounts(tmp_path_factory):
  """Skips where a private read-only mount cannot be made (no user
  namespaces); checks that one really refuses writes."""
  probe = tmp_path_factory.mktemp("ro_probe")
  if shutil.which("unshare") is None:
    pytest.skip("unshare(1) is not installed")
  run = _run(["touch", probe / "x"], read_only=probe)
  if "Read-only file system" not in run.stderr:
    pytest.skip(f"no read-only mount here: {run.stderr.strip()[-200:]}")
  assert not (probe / "x").exists()


def snapshot(directory):
  """relative path -> sha256 of every file under `directory`."""
  found = {}
  for root, _, files in os.walk(directory):
    for name in files:
      path = os.path.join(root, name)
      with open(path, "rb") as f:
        found[os.path.relpath(path, directory)] = hashlib.sha256(
            f.read()
        ).hexdigest()
  return found


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
  root = tmp_path_factory.mktemp("fault_data")
  write_records(root / "train-0.tfrecord", 128, seed=0)
  write_records(root / "eval.tfrecord", 32, seed=5)
  return root


def _pretrain(data_dir, model_dir, *extra, steps=4, **kwargs):
  return _run(_args(data_dir, model_dir, *extra, steps=steps), **kwargs)


@pytest.fixture(scope="module")
def trained(data_dir, tmp_path_factory):
  """A model directory with ckpt-2 and ckpt-4 (4 steps, one every 2)."""
  model_dir = tmp_path_factory.mktemp("trained") / "model"
  run = _pretrain(data_dir, model_dir)
  assert run.returncode == 0, run.stderr[-3000:]
  return model_dir


def _copy(trained, tmp_path):
  target = tmp_path / "model"
  shutil.copytree(trained, target)
  return target


def _truncate(path, fraction=0.5):
  """Cuts the file a few bytes past `fraction`: inside a record, not at the
  boundary between two records of equal size."""
  size = os.path.getsize(path)
  with open(path, "r+b") as f:
    f.truncate(int(size * fraction) + 100)


def _flip_byte(path, fraction=0.6):
  with open(path, "r+b") as f:
    f.seek(int(os.path.getsize(path) * fraction))
    byte = f.read(1)
    f.seek(-1, os.SEEK_CUR)
    f.write(bytes([byte[0] ^ 0xFF]))


# --- Pretraining data ---------------------------------------------------


@pytest.mark.parametrize("fault", ["truncated", "corrupted", "vocabulary"])
def test_bad_training_data_is_one_line_naming_the_file(
    data_dir, tmp_path, fault
):
  bad_dir = tmp_path / "data"
  bad_dir.mkdir()
  shutil.copy(os.path.join(data_dir, "eval.tfrecord"), bad_dir)
  train = bad_dir / "train-0.tfrecord"
  extra = []
  if fault == "vocabulary":
    # Ids up to 63 for a model of 40 pieces, with no manifest.json to tell.
    write_records(train, 128, seed=0)
    extra = ["--gin_param=AlbertConfig.vocab_size=40"]
  else:
    shutil.copy(os.path.join(data_dir, "train-0.tfrecord"), train)
    (_truncate if fault == "truncated" else _flip_byte)(train)
  model_dir = tmp_path / "model"
  line = assert_one_line(
      _pretrain(bad_dir, model_dir, *extra), "run_pretraining"
  )
  if fault == "vocabulary":
    assert "token id >= AlbertConfig.vocab_size=40" in line
  else:
    assert f"{train}: record " in line and "damaged" in line
  assert not model_dir.exists()  # a new model_dir leaves no trace


def test_a_shard_cut_inside_its_last_header_is_caught_by_its_size(
    data_dir, tmp_path
):
  """TensorFlow reads a file cut inside the header of its last record as a
  clean end of file; the size in manifest.json says otherwise."""
  bad_dir = tmp_path / "data"
  shutil.copytree(data_dir, bad_dir)
  train = bad_dir / "train-0.tfrecord"
  size = os.path.getsize(train)
  with open(train, "rb") as f:
    *_, last = tfrecord.read_frames(f)
  with open(bad_dir / "manifest.json", "w") as f:
    json.dump({"shards": [{"file": train.name, "bytes": size}]}, f)
  with open(train, "r+b") as f:
    f.truncate(size - (12 + len(last) + 4) + 6)  # 6 bytes of its header
  line = assert_one_line(
      _pretrain(bad_dir, tmp_path / "model"),
      "run_pretraining",
      f"{train} is {size - len(last) - 10} bytes but {bad_dir}/manifest.json "
      f"says {size}: the file was cut short or changed",
  )
  assert "make the data again" in line
  assert not (tmp_path / "model").exists()


def test_data_of_a_larger_vocabulary_is_refused_before_training(
    data_dir, tmp_path
):
  bad_dir = tmp_path / "data"
  shutil.copytree(data_dir, bad_dir)
  with open(bad_dir / "manifest.json", "w") as f:
    f.write('{"spm_model": {"vocab_size": 30000}}')
  model_dir = tmp_path / "model"
  assert_one_line(
      _pretrain(bad_dir, model_dir),
      "run_pretraining",
      "made with 30000 SentencePiece pieces but AlbertConfig.vocab_size=64",
  )
  assert not model_dir.exists()


# --- Model directory ------------------------------------------------------


def test_model_dir_that_is_a_file(data_dir, tmp_path):
  model_dir = tmp_path / "model"
  model_dir.write_text("not a directory")
  assert_one_line(
      _pretrain(data_dir, model_dir),
      "run_pretraining",
      f"model_dir {model_dir}",
      "is a file, not a directory",
  )
  assert model_dir.read_text() == "not a directory"


def test_read_only_model_dir(data_dir, read_only_mounts, tmp_path):
  parent = tmp_path / "read_only"
  parent.mkdir()
  run = _pretrain(data_dir, parent / "model", read_only=parent)
  assert_one_line(run, "run_pretraining", "is not writable")
  assert os.listdir(parent) == []


def test_full_disk_on_a_new_model_dir_leaves_nothing(data_dir, tmp_path):
  model_dir = tmp_path / "model"
  run = _pretrain(data_dir, model_dir, limit_bytes=20_000)
  assert_one_line(run, "run_pretraining", "File too large")
  assert not model_dir.exists()


def test_full_disk_on_resume_changes_nothing(data_dir, trained, tmp_path):
  model_dir = _copy(trained, tmp_path)
  before = snapshot(model_dir)
  run = _pretrain(data_dir, model_dir, steps=6, limit_bytes=20_000)
  assert_one_line(run, "run_pretraining", "File too large")
  assert snapshot(model_dir) == before


def test_another_models_checkpoint_changes_nothing(data_dir, trained, tmp_path):
  model_dir = _copy(trained, tmp_path)
  os.remove(model_dir / "model_config.json")
  before = snapshot(model_dir)
  run = _pretrain(
      data_dir, model_dir, "--gin_param=AlbertConfig.hidden_size=32"
  )
  assert_one_line(run, "run_pretraining", "does not match this model")
  assert snapshot(model_dir) == before


def test_a_second_run_into_a_held_model_dir_refuses(
    data_dir, trained, tmp_path
):
  """While a run holds model_dir, another one refuses naming it; --mode=eval
  reads without the lock."""
  model_dir = _copy(trained, tmp_path)
  holder = start_from_repo(
      [
          "-c",
          "import sys, time; from official.core import run_lock\n"
          "with run_lock.hold(sys.argv[1]):\n"
          "  print('held', flush=True); time.sleep(600)",
          model_dir,
      ],
      stdout=subprocess.PIPE,
      text=True,
  )
  try:
    assert holder.stdout.readline().strip() == "held"
    before = snapshot(model_dir)
    run = _pretrain(data_dir, model_dir, steps=6)
    assert_one_line(
        run,
        "run_pretraining",
        f"model_dir {model_dir} is in use by another run (pid {holder.pid} on ",
        "wait for it to end or stop it, or choose another model_dir",
    )
    assert snapshot(model_dir) == before
    evaluated = _pretrain(data_dir, model_dir, "--mode=eval")
    assert evaluated.returncode == 0, evaluated.stderr[-2000:]
  finally:
    holder.kill()
    holder.wait()


# --- Checkpoints ----------------------------------------------------------


def _data_file(model_dir, step):
  return model_dir / f"ckpt-{step}.data-00000-of-00001"


@pytest.mark.parametrize("fault", ["truncated", "corrupted"])
def test_damaged_latest_checkpoint_resumes_from_the_one_before(
    data_dir, trained, tmp_path, fault
):
  model_dir = _copy(trained, tmp_path)
  (_truncate if fault == "truncated" else _flip_byte)(_data_file(model_dir, 4))
  run = _pretrain(data_dir, model_dir, steps=6)
  assert run.returncode == 0, run.stderr[-3000:]
  assert "ckpt-4 is damaged" in run.stderr
  assert "Resuming from" in run.stderr and "ckpt-2" in run.stderr
  assert tf.train.latest_checkpoint(str(model_dir)).endswith("ckpt-6")
  assert checkpoint_damage.find_damage(str(model_dir / "ckpt-6")) is None


def test_every_checkpoint_damaged_is_one_line_and_changes_nothing(
    data_dir, trained, tmp_path
):
  model_dir = _copy(trained, tmp_path)
  _truncate(_data_file(model_dir, 2))
  _truncate(model_dir / "ckpt-4.index")
  before = snapshot(model_dir)
  assert_one_line(
      _pretrain(data_dir, model_dir, steps=6),
      "run_pretraining",
      "every checkpoint in",
      "ckpt-4, ckpt-2",
  )
  assert snapshot(model_dir) == before


def test_export_and_conversion_name_the_damaged_file(
    trained, spm_model, tmp_path
):
  model_dir = _copy(trained, tmp_path)
  _truncate(_data_file(model_dir, 4))
  spm = spm_model
  export_dir = tmp_path / "export"
  run = _run(
      [
          sys.executable,
          "-m",
          "albert.run_export",
          f"--model_dir={model_dir}",
          f"--spm_model_file={spm}",
          f"--export_dir={export_dir}",
      ]
  )
  assert_one_line(
      run, "run_export", "ckpt-4 is damaged", str(_data_file(model_dir, 4))
  )
  assert not export_dir.exists()
  output_dir = tmp_path / "converted"
  run = _run(
      [
          sys.executable,
          os.path.join(REPO, "tools", "convert_checkpoint.py"),
          f"--checkpoint={model_dir}",
          "--to=original",
          f"--output_dir={output_dir}",
      ]
  )
  assert_one_line(
      run,
      "convert_checkpoint",
      "ckpt-4 is damaged",
      str(_data_file(model_dir, 4)),
  )
  assert not output_dir.exists()


# --- Kill -9 ----------------------------------------------------------------


def _listed_steps(model_dir):
  state = tf.train.get_checkpoint_state(str(model_dir))
  if state is None:
    return []
  return [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]


def test_kill_at_several_points_leaves_only_whole_checkpoints(
    data_dir, tmp_path
):
  model_dir = tmp_path / "model"
  args = _args(data_dir, model_dir, steps=200)
  # Killed once a checkpoint of at least this step is listed, after a pause
  # that lands in the middle of the next saves.
  for step, pause in ((2, 0.0), (40, 0.03), (90, 0.11)):
    process = start_from_repo(
        args,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 300
    while time.time() < deadline and process.poll() is None:
      if max(_listed_steps(model_dir), default=0) >= step:
        break
      time.sleep(0.02)
    assert process.poll() is None, "the run ended before it could be killed"
    time.sleep(pause)
    process.send_signal(signal.SIGKILL)
    process.wait()
    listed = _listed_steps(model_dir)
    assert max(listed) >= step
    # A checkpoint is never without its model_config.json (export reads it).
    assert os.path.exists(model_dir / "model_config.json")
    for listed_step in listed:
      prefix = str(model_dir / f"ckpt-{listed_step}")
      assert checkpoint_damage.find_damage(prefix) is None, prefix
  run = _run(args)
  assert run.returncode == 0, run.stderr[-3000:]
  assert max(_listed_steps(model_dir)) == 200
  names = os.listdir(model_dir)
  assert "model_config.json" in names and "operative_config.gin" in names
  assert not [n for n in names if ".tmp" in n or "_temp" in n], names


# --- --verbose ---------------------------------------------------------------


def test_verbose_shows_the_traceback(data_dir, tmp_path):
  model_dir = tmp_path / "model"
  model_dir.write_text("not a directory")
  for run in (
      _pretrain(data_dir, model_dir, "--verbose"),
      _pretrain(data_dir, model_dir, extra_env={"ALBERT_VERBOSE": "1"}),
  ):
    assert run.returncode != 0
    assert "Traceback" in run.stderr and "InputError" in run.stderr


# --- Data generation ----------------------------------------------------------


def _tool(name):
  return [sys.executable, os.path.join(REPO, "tools", f"{name}.py")]


def test_sentencepiece_into_a_read_only_or_full_disk(
    corpus_path, read_only_mounts, tmp_path
):
  out = tmp_path / "out"
  out.mkdir()
  args = _tool("train_sentencepiece") + [
      f"--input={corpus_path}",
      f"--model_prefix={out}/spm",
      "--vocab_size=200",
      "--max_sentences=2000",
  ]
  assert_one_line(
      _run(args, read_only=out), "train_sentencepiece", "is not writable"
  )
  assert os.listdir(out) == []
  line = assert_one_line(
      _run(args, limit_bytes=4000), "train_sentencepiece", "File too large"
  )
  assert f"{out}/spm." in line  # the file being written, not a temporary
  assert os.listdir(out) == []  # neither spm.model nor spm.vocab alone


def test_datagen_on_a_full_disk_says_rerun_and_the_rerun_finishes(
    corpus_path, spm_model, tmp_path
):
  out = tmp_path / "data"
  args = _tool("create_pretraining_data") + [
      f"--input_file={corpus_path}",
      f"--output_file={out}/train.tfrecord",
      f"--spm_model_file={spm_model}",
      "--max_seq_length=32",
      "--max_predictions_per_seq=5",
      "--dupe_factor=1",
      "--num_output_shards=2",
  ]
  run = _run(args, limit_bytes=30_000)
  assert_one_line(
      run, "create_pretraining_data", "File too large", "then rerun"
  )
  final = [
      n for n in os.listdir(out) if ".tfrecord" in n or n.endswith(".json")
  ]
  assert not [n for n in final if not n.startswith(".")], final
  run = _run(args)
  assert run.returncode == 0, run.stderr[-3000:]
  assert (out / "manifest.json").exists()
