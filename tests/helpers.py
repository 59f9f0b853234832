"""What many tests share: the repository path, tiny model configs, and
command-line runs in a fresh process."""

import contextlib
import fcntl
import functools
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import warnings
from typing import NamedTuple, Sequence

from albert.modeling.config import AlbertConfig
from official.benchmark import peers
from tests import zygote

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Fresh processes: quiet TensorFlow, and the checkout first on the path (the
# package is installed editable, so this only matters for a bare checkout).
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=REPO)
# A server's environment: not the checkout on the path, only TensorFlow and
# TF-Text wanted (finetune_helpers.call_saved_model).
SERVING_ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
# Python commands with one of these environments fork from a process that
# has already imported TensorFlow (tests/zygote.py): the suite's stack for
# ENV, TensorFlow and TF-Text alone for SERVING_ENV. ALBERT_TEST_ZYGOTE=0
# turns both off.
_ZYGOTES = (
    (
        zygote.Zygote(ENV),
        zygote.Zygote(SERVING_ENV, preload=("tensorflow", "tensorflow_text")),
    )
    if os.environ.get("ALBERT_TEST_ZYGOTE", "1") != "0"
    else ()
)

# The smallest model most tests need; each test overrides what it is about
# (vocab_size to fit its SentencePiece model or records, sizes, sharing).
_TINY = dict(
    vocab_size=64,
    embedding_size=8,
    hidden_size=16,
    num_layers=2,
    num_heads=2,
    intermediate_size=32,
    max_position_embeddings=32,
)


# The head of a `-c` script run in a fresh process (`run`) with two logical
# CPU devices, as the suite's own processes have (conftest.py), and absl's
# INFO lines on stderr. A fresh process: the collective-op keys of
# MirroredStrategy restart with every strategy, so strategies built earlier
# in a test worker would clash with a new one; a multi-worker strategy can
# be made once per process.
TWO_CPUS_SCRIPT = """
import json, sys
from absl import logging
import tensorflow as tf
logging.set_verbosity(logging.INFO)
cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)
"""


def free_ports(n: int):
  """n loopback ports free at the time of the call."""
  sockets = [socket.socket() for _ in range(n)]
  for s in sockets:
    s.bind(("127.0.0.1", 0))
  ports = [s.getsockname()[1] for s in sockets]
  for s in sockets:
    s.close()
  return ports


# For tests that skip without a test-only peer and run it in other processes.
installed = peers.installed


def tiny_config(**overrides) -> AlbertConfig:
  """A tiny `AlbertConfig`: 2 layers, H=16, E=8, V=64, 32 positions."""
  return AlbertConfig(**{**_TINY, **overrides})


def tool(name: str) -> str:
  """The path of tools/NAME.py."""
  return os.path.join(REPO, "tools", f"{name}.py")


def run(
    args: Sequence[str],
    *,
    timeout: float = 600,
    env=None,
    cwd=None,
    fork: bool = True,
    **kwargs,
) -> subprocess.CompletedProcess:
  """Runs a command from the repository root; text output captured.

  `args` starting with a tools/ path, `-m` or `-c` get `sys.executable` in
  front. Every test's fresh process goes through `run` or `start`. A Python
  command with ENV or SERVING_ENV (or either with other values of what is
  read at run time: zygote.RUNTIME_ENV) and no options but `input` is
  forked from that environment's zygote (unless `fork=False`); anything
  else is a plain subprocess.
  """
  command = _command(args)
  env = env or ENV
  server = _server(env, command) if fork else None
  if server is not None and set(kwargs) <= {"input"}:
    return server.run(
        command,
        cwd=os.fspath(cwd or REPO),
        env=env,
        timeout=timeout,
        input=kwargs.get("input"),
    )
  return subprocess.run(
      command,
      cwd=cwd or REPO,
      env=env,
      capture_output=True,
      text=True,
      timeout=timeout,
      **kwargs,
  )


# What `start` passes on to a forked command; any other option of
# `subprocess.Popen` gets a plain subprocess.
_FORKED_OPTIONS = frozenset(
    {"stdin", "stdout", "stderr", "text", "bufsize", "encoding", "errors"}
)


def start(
    args: Sequence[str], *, env=None, cwd=None, fork: bool = True, **kwargs
) -> subprocess.Popen:
  """`run`'s command started in the background (a `subprocess.Popen`), for
  tests that kill it, signal it or talk to it; output is not captured
  unless asked. Forked from a zygote as `run`'s are (its parent is then the
  zygote, not the test)."""
  command = _command(args)
  env = env or ENV
  server = _server(env, command) if fork else None
  if server is not None and set(kwargs) <= _FORKED_OPTIONS:
    return server.popen(command, cwd=os.fspath(cwd or REPO), env=env, **kwargs)
  return subprocess.Popen(command, cwd=cwd or REPO, env=env, **kwargs)


def _server(env, command):
  """The zygote that can fork `command` with `env`, or None."""
  if not zygote.python_command(command):
    return None
  if sum(len(a.encode()) for a in command) > zygote.MAX_COMMAND_BYTES:
    return None
  return next((z for z in _ZYGOTES if z.serves(env)), None)


def _command(args: Sequence[str]):
  """`args` as strings; a tools/ path, `-m` or `-c` gets `sys.executable`."""
  args = [str(a) for a in args]
  if args[0] in ("-m", "-c") or args[0].endswith(".py"):
    args = [sys.executable] + args
  return args


def assert_one_line(run, program, *expected):
  """Exit 1, no traceback, and `PROGRAM: error: ...` as the one last line."""
  assert run.returncode == 1, (run.returncode, run.stderr[-3000:])
  assert "Traceback" not in run.stderr, run.stderr[-3000:]
  lines = [l for l in run.stderr.splitlines() if l.strip()]
  ours = [l for l in lines if l.startswith(f"{program}: error: ")]
  assert len(ours) == 1 and lines[-1] == ours[0], run.stderr[-3000:]
  for text in expected:
    assert text in ours[0], ours[0]
  return ours[0]


class ProgramFlags(NamedTuple):
  """The flags of one program (of albert/cli or albert/experiments), by
  name."""

  names: frozenset  # every flag it accepts, absl's and TensorFlow's included
  booleans: frozenset  # those of `names` that take --noNAME
  own: frozenset  # those the package defines: the program's and albert's


@functools.lru_cache(maxsize=None)
def program_flags(program: str, package: str = "albert.cli") -> ProgramFlags:
  """The flags of PACKAGE.PROGRAM (albert/cli/PROGRAM.py, or a driver of
  albert/experiments), listed by a fresh process (the programs define flags
  of the same names, so one process holds one), once per test process."""
  script = f"""
import json
from absl import flags
import {package}.{program}
defined = flags.FLAGS.flags_by_module_dict()
names, booleans, own = [], [], []
for module, module_flags in defined.items():
  if module.startswith("{package}.") and module != "{package}.{program}":
    continue
  for flag in module_flags:
    names.append(flag.name)
    if flag.boolean:
      booleans.append(flag.name)
    if module.startswith(("albert.", "official.")):
      own.append(flag.name)
print(json.dumps([names, booleans, own]))
"""
  done = run(["-c", script], timeout=300)
  assert done.returncode == 0, done.stderr[-2000:]
  lists = json.loads(done.stdout.strip().splitlines()[-1])
  return ProgramFlags(*map(frozenset, lists))


def made_once(tmp_path_factory, name: str, make) -> pathlib.Path:
  """A directory `make(path)` fills once per test run, however many xdist
  workers need it: the first to get here builds it under a file lock in the
  directory the workers share, the others wait and reuse it (read only)."""
  base = tmp_path_factory.getbasetemp()
  shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
  path = shared / name
  with open(shared / f"{name}.lock", "w") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    complete = shared / f"{name}.complete"
    if not complete.exists():
      shutil.rmtree(path, ignore_errors=True)
      path.mkdir()
      make(path)
      complete.touch()
  return path


@contextlib.contextmanager
def eagerly(enabled: bool = True):
  """Inside, every `tf.function` runs op by op, untraced (nothing changes
  when `enabled` is false, for code that runs both sides of a comparison).

  For the reference side of a comparison (the plain float32 step that an
  XLA, recomputed or mirrored step is held to): the same Python code and
  ops, without the graph's rewrites, in a tenth of the time of a traced
  train step's first call (tracing a tiny model's step costs seconds). The
  side under test stays traced, as users run it. tf.data functions are
  traced either way.
  """
  if not enabled:
    yield
    return
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  before = tf.config.functions_run_eagerly()
  tf.config.run_functions_eagerly(True)
  try:
    with warnings.catch_warnings():
      warnings.filterwarnings("ignore", "Even though the", UserWarning)
      yield
  finally:
    tf.config.run_functions_eagerly(before)


@contextlib.contextmanager
def autograph_rewrites():
  """A list that receives the name of every function AutoGraph rewrites
  inside the block (TensorFlow's private `_convert_actual`, wrapped as
  albert.experiments.startup wraps it)."""
  from tensorflow.python.autograph.impl import api  # pylint: disable=g-import-not-at-top

  convert = api._convert_actual  # pylint: disable=protected-access
  names = []

  def counted(entity, program_ctx):
    names.append(getattr(entity, "__qualname__", repr(entity)))
    return convert(entity, program_ctx)

  api._convert_actual = counted  # pylint: disable=protected-access
  try:
    yield names
  finally:
    api._convert_actual = convert  # pylint: disable=protected-access


# Ops that call back into Python: an input pipeline holding one cannot run
# where the tf.data runtime has no Python (a TPU host's, a tf.data service
# worker's) and holds the GIL where it can.
PYTHON_OPS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})


def python_ops_in(dataset) -> set:
  """The `PYTHON_OPS` in a dataset's graph, its functions included."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  graph = tf.compat.v1.GraphDef.FromString(
      dataset._as_serialized_graph().numpy()  # pylint: disable=protected-access
  )
  ops = {node.op for node in graph.node}
  for function in graph.library.function:
    ops.update(node.op for node in function.node_def)
  return ops & PYTHON_OPS
