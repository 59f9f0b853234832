"""A process with TensorFlow already imported that forks the tests' commands.

About half of the suite's CPU time went into starting Python processes that
each import TensorFlow (4-7 s, by CPU) before doing a second of work.
`Zygote` (the client, one per pytest process) starts this file once; the
server imports the heavy third-party stack and then, for each command, forks
a child that becomes `python -m MODULE ...`, `python SCRIPT ...` or
`python -c CODE ...` with its own working directory, argument list, standard
streams and process group, and exits as that program would.

A server imports `preload` (by default PRELOAD; tests/helpers.py keeps a
second server of TensorFlow and TF-Text alone for commands that stand in for
a model server). Only third-party modules are imported ahead: a command
still imports and runs the package's own code, flags and gin registrations
afresh, and tests that check what a command imports of `albert`/`official`
keep their meaning.
What differs from a fresh interpreter: no module teardown at exit (see
`_run_and_exit`), and every child has the server's string-hash seed. A
command whose environment differs from the server's, or that needs anything
`subprocess.run` offers beyond a timeout and text input, runs as a plain
subprocess instead (`helpers.run` decides); tests/test_zygote.py holds the
two ways to the same results.
"""

import json
import locale
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading

# What every command of the suite imports before its first line of work.
PRELOAD = (
    "numpy",
    "tensorflow",
    "tf_keras",
    "tensorflow_text",
    "sentencepiece",
    "gin",
    "absl.app",
    "absl.flags",
    "absl.logging",
)


def python_command(args):
  """`(kind, target, rest)` for `[python] -m MOD|-c CODE|SCRIPT.py ...`, or
  None for anything else (an option before the target, another program)."""
  if not args or args[0] != sys.executable or len(args) < 2:
    return None
  if args[1] in ("-m", "-c") and len(args) >= 3:
    return args[1], args[2], list(args[3:])
  if args[1].endswith(".py"):
    return "script", args[1], list(args[2:])
  return None


class Zygote:
  """The client: starts the server lazily and runs commands through it."""

  def __init__(self, env, preload=PRELOAD):
    self._env = dict(env)
    self._preload = tuple(preload)
    self._proc = None
    self._sock = None
    self._file = None
    self._log = None
    # The server runs one command at a time: a test's threads take turns.
    self._lock = threading.Lock()

  def serves(self, env) -> bool:
    """Whether a command with `env` can be forked from this server."""
    return env == self._env

  def _start(self):
    ours, theirs = socket.socketpair()
    # The server's own output (TensorFlow's start-up lines) goes to a log,
    # not to whichever test's captured stream was open when it started.
    self._log = tempfile.NamedTemporaryFile(prefix="zygote-", suffix=".log")
    self._proc = subprocess.Popen(
        [
            sys.executable,
            os.path.abspath(__file__),
            str(theirs.fileno()),
            ",".join(self._preload),
        ],
        env=self._env,
        pass_fds=(theirs.fileno(),),
        stdin=subprocess.DEVNULL,
        stdout=self._log,
        stderr=self._log,
    )
    theirs.close()
    self._sock = ours
    self._file = ours.makefile("rwb", buffering=0)

  def run(self, args, *, cwd, timeout, input=None):
    """Like `subprocess.run(args, capture_output=True, text=True, ...)`."""
    with self._lock:
      return self._run(args, cwd=cwd, timeout=timeout, input=input)

  def _run(self, args, *, cwd, timeout, input):
    kind, target, rest = python_command(args)
    if self._proc is None or self._proc.poll() is not None:
      self._start()
    with tempfile.TemporaryDirectory(prefix="zygote-") as tmp:
      paths = {n: os.path.join(tmp, n) for n in ("in", "out", "err")}
      with open(paths["in"], "w") as f:
        f.write(input or "")
      request = dict(kind=kind, target=target, args=rest, cwd=cwd, **paths)
      pid = None
      try:
        self._file.write(json.dumps(request).encode() + b"\n")
        pid = self._reply("pid")
        ready, _, _ = select.select([self._sock], [], [], timeout)
        if not ready:
          _kill_group(pid)
        returncode = self._reply("returncode")
      except BaseException:
        # Interrupted half-way (Ctrl-C in pytest, a dead server): the
        # command and the server go, and the next call starts a new one.
        if pid is not None:
          _kill_group(pid)
        self._proc.kill()
        self._proc.wait()
        self._proc = None
        raise
      out, err = (_read_text(paths[n]) for n in ("out", "err"))
    if not ready:
      raise subprocess.TimeoutExpired(args, timeout, out, err)
    return subprocess.CompletedProcess(args, returncode, out, err)

  def _reply(self, key):
    line = self._file.readline()
    if not line:
      with open(self._log.name, errors="replace") as f:
        log = f.read()[-3000:]
      raise RuntimeError(f"the test zygote died; its output:\n{log}")
    return json.loads(line)[key]


def _kill_group(pid):
  try:
    os.killpg(pid, signal.SIGKILL)
  except ProcessLookupError:
    pass


def _read_text(path):
  # Universal newlines in the locale's encoding, as `subprocess.run(...,
  # text=True)` decodes.
  with open(path, encoding=locale.getpreferredencoding(False)) as f:
    return f.read()


def _serve(fd):
  """Forks a child per request; returns the request in the child."""
  sock = socket.socket(fileno=fd)
  conn = sock.makefile("rwb", buffering=0)
  for line in conn:
    request = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
      conn.close()
      sock.close()
      return request
    # Also set by the child: whichever runs first, the group exists before
    # the client may signal it.
    try:
      os.setpgid(pid, pid)
    except (PermissionError, ProcessLookupError):
      pass  # the child has already exec'd or exited
    conn.write(json.dumps({"pid": pid}).encode() + b"\n")
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    conn.write(json.dumps({"returncode": code}).encode() + b"\n")
  return None


def _become(request):
  """Turns this forked child into the requested program."""
  import runpy
  import types

  os.setpgid(0, 0)
  # A fresh interpreter seeds numpy's global generator from the system;
  # forked children would all share the server's state (Python's `random`
  # reseeds itself after a fork).
  import numpy as np

  np.random.seed()
  os.chdir(request["cwd"])
  write = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
  for fd, name, mode in (
      (0, "in", os.O_RDONLY),
      (1, "out", write),
      (2, "err", write),
  ):
    new = os.open(request[name], mode, 0o600)
    os.dup2(new, fd)
    os.close(new)
  kind, target, args = request["kind"], request["target"], request["args"]
  if kind == "-m":
    sys.path[0] = os.getcwd()
    sys.argv = ["-m"] + args  # runpy puts the module's file first
    runpy.run_module(target, run_name="__main__", alter_sys=True)
  elif kind == "-c":
    sys.path[0] = ""
    sys.argv = ["-c"] + args
    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    exec(compile(target, "<string>", "exec"), main.__dict__)
  else:
    path = os.path.abspath(target)
    sys.path[0] = os.path.dirname(os.path.realpath(path))
    sys.argv = [target] + args
    runpy.run_path(path, run_name="__main__")


def _exit_code(exit_):
  """The status Python gives a `SystemExit` that reaches the top level."""
  code = exit_.code
  if code is None:
    return 0
  if isinstance(code, int):
    return code
  print(code, file=sys.stderr)
  return 1


def _run_and_exit(request):
  """Runs the program, then exits as Python does up to module teardown:
  non-daemon threads joined, `atexit` functions run (logging's shutdown and
  `weakref.finalize` among them), standard streams flushed. Tearing down the
  modules of a process that holds TensorFlow takes another 1.5-2 s; no
  command of the package leaves work to it (outputs are closed before they
  are renamed into place)."""
  import atexit

  try:
    _become(request)
    code = 0
  except SystemExit as e:
    code = _exit_code(e)
  except BaseException:  # pylint: disable=broad-except
    sys.excepthook(*sys.exc_info())
    code = 1
  threading._shutdown()  # pylint: disable=protected-access
  atexit._run_exitfuncs()  # pylint: disable=protected-access
  for stream in (sys.stdout, sys.stderr):
    try:
      stream.flush()
    except (OSError, ValueError):
      pass
  os._exit(code)


if __name__ == "__main__":
  # The server's own directory must not shadow anything a command imports.
  del sys.path[0]
  import importlib

  for _name in sys.argv[2].split(","):
    importlib.import_module(_name)
  _request = _serve(int(sys.argv[1]))
  if _request is not None:
    sys.path.insert(0, "")
    _run_and_exit(_request)
