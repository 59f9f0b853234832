"""A process with TensorFlow already imported that forks the tests' commands.

About half of the suite's CPU time went into starting Python processes that
each import TensorFlow (4-7 s, by CPU) before doing a second of work.
`Zygote` (the client, one per pytest process) starts this file once; the
server imports the heavy third-party stack and then, for each command, forks
a child that becomes `python -m MODULE ...`, `python SCRIPT ...` or
`python -c CODE ...` with its own working directory, argument list, standard
streams (file descriptors passed over the socket) and process group, and
exits as that program would. Commands may run side by side: `run` waits for
one, `popen` returns a `subprocess.Popen` for a test to signal, kill or talk
to (the server reports its children's exit statuses).

A server imports `preload` (by default PRELOAD; tests/helpers.py keeps a
second server of TensorFlow and TF-Text alone for commands that stand in for
a model server). Only third-party modules are imported ahead: a command
still imports and runs the package's own code, flags and gin registrations
afresh, and tests that check what a command imports of `albert`/`official`
keep their meaning.
What differs from a fresh interpreter: no module teardown at exit (see
`_run_and_exit`), the parent is the server, and every child has the
server's string-hash seed. A command whose environment differs from the
server's in anything but RUNTIME_ENV, or that needs an option of
`subprocess` beyond working directory, streams and text mode, runs as a
plain subprocess instead (`helpers.run` and `helpers.start` decide);
tests/test_zygote.py holds the two ways to the same results.
"""

import contextlib
import gc
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

# Environment variables read when a program runs, not when the preloaded
# modules are imported: a command's environment may differ from the
# server's in these (set in the child before the program starts).
RUNTIME_ENV_PREFIXES = ("ALBERT_",)  # the package's own; it is not preloaded
RUNTIME_ENV = frozenset(
    {
        "TF_CONFIG",  # read when a distribution strategy is built
        "HF_ENDPOINT",  # read by huggingface_hub, not preloaded
    }
)
_OWN_SWITCH = "ALBERT_TEST_ZYGOTE"

# The longest command line a request may carry (a `-c` script and its
# arguments): a SOCK_SEQPACKET message must fit the socket's send buffer
# (about 208 KiB by default on Linux). helpers.py runs longer ones as plain
# subprocesses.
MAX_COMMAND_BYTES = 100_000
_MAX_MESSAGE = 1 << 20  # what one receive takes


@contextlib.contextmanager
def long_lived():
  """For imports whose objects live as long as the process: the cyclic
  collector is paused while they run (TensorFlow's import would run several
  full collections) and leaves what they made out of every later pass."""
  gc.disable()
  try:
    yield
  finally:
    gc.freeze()
    gc.enable()


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


def _runtime_key(key):
  return key != _OWN_SWITCH and (
      key in RUNTIME_ENV or key.startswith(RUNTIME_ENV_PREFIXES)
  )


class Zygote:
  """The client: starts the server lazily and runs commands through it."""

  def __init__(self, env, preload=PRELOAD):
    self._env = dict(env)
    self._preload = tuple(preload)
    self._proc = None
    self._sock = None
    self._logs = {}  # each server's log, by pid
    self._next_id = 0
    # Replies by request id; the reader thread fills them. A request whose
    # server has died (`_dead`, by pid) gets no more replies.
    self._replies = {}
    self._server_of = {}
    self._dead = set()
    self._changed = threading.Condition()
    self._send_lock = threading.Lock()

  def serves(self, env) -> bool:
    """Whether a command with `env` can be forked from this server."""
    keys = set(env) | set(self._env)
    return all(env.get(k) == self._env.get(k) or _runtime_key(k) for k in keys)

  def _start(self):
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    # The server's own output (TensorFlow's start-up lines) goes to a log,
    # not to whichever test's captured stream was open when it started. An
    # unnamed file: the system removes it when the last process holding it
    # exits, however the pytest worker ends (a named one was left in the
    # temporary directory by every worker).
    log = tempfile.TemporaryFile(prefix="zygote-", suffix=".log")
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
        stdout=log,
        stderr=log,
    )
    theirs.close()
    self._logs[self._proc.pid] = log
    if self._sock is not None:
      self._sock.close()
    self._sock = ours
    threading.Thread(
        target=self._read, args=(ours, self._proc), daemon=True
    ).start()

  def _read(self, sock, proc):
    """Files each reply of the server under its request id."""
    while True:
      try:
        message = sock.recv(_MAX_MESSAGE)
      except OSError:
        message = b""
      with self._changed:
        if not message:
          self._dead.add(proc.pid)
          self._changed.notify_all()
          return
        reply = json.loads(message)
        self._replies.setdefault(reply["id"], {}).update(reply)
        self._changed.notify_all()

  def _died(self, pid):
    """The error for a request whose server (`pid`) died: that server's
    output, not a restarted one's."""
    # The server shares the file's offset: read without moving it.
    fd = self._logs[pid].fileno()
    size = os.fstat(fd).st_size
    log = os.pread(fd, 3000, max(0, size - 3000)).decode(errors="replace")
    return RuntimeError(f"the test zygote died (pid {pid}); its output:\n{log}")

  def spawn(self, args, *, cwd, env, fds):
    """Forks `args` with standard streams `fds` (three file descriptors)
    and returns (request id, pid)."""
    kind, target, rest = python_command(args)
    changed = {
        k: env.get(k)
        for k in set(env) | set(self._env)
        if env.get(k) != self._env.get(k)
    }
    with self._send_lock:
      if self._proc is None or self._proc.poll() is not None:
        self._start()
      self._next_id += 1
      request_id = self._next_id
      self._server_of[request_id] = self._proc.pid
      request = dict(
          id=request_id,
          kind=kind,
          target=target,
          args=rest,
          cwd=os.fspath(cwd),
          env=changed,
      )
      socket.send_fds(self._sock, [json.dumps(request).encode()], list(fds))
    return request_id, self._await(request_id, "pid", None)

  def _await(self, request_id, key, timeout):
    """The server's `key` for the request; None if `timeout` passes."""
    with self._changed:
      ok = self._changed.wait_for(
          lambda: key in self._replies.get(request_id, {})
          or self._server_of.get(request_id) in self._dead,
          timeout,
      )
      if not ok:
        return None
      if key in self._replies.get(request_id, {}):
        value = self._replies[request_id][key]
        if key == "status":
          del self._replies[request_id]
          del self._server_of[request_id]
        return value
      pid = self._server_of[request_id]
    raise self._died(pid)

  def status(self, request_id, timeout):
    """The child's wait status (as `os.waitpid` gives it); None if it is
    still running after `timeout` seconds (None: wait as long as it runs)."""
    return self._await(request_id, "status", timeout)

  def run(self, args, *, cwd, env, timeout, input=None):
    """Like `subprocess.run(args, capture_output=True, text=True, ...)`."""
    with tempfile.TemporaryDirectory(prefix="zygote-") as tmp:
      paths = {n: os.path.join(tmp, n) for n in ("in", "out", "err")}
      with open(paths["in"], "w") as f:
        f.write(input or "")
      modes = {"in": "rb", "out": "wb", "err": "wb"}
      files = [open(paths[n], modes[n]) for n in ("in", "out", "err")]
      try:
        request_id, pid = self.spawn(
            args, cwd=cwd, env=env, fds=[f.fileno() for f in files]
        )
      finally:
        for f in files:
          f.close()
      try:
        status = self.status(request_id, timeout)
        timed_out = status is None
        if timed_out:
          _kill_group(pid)
          status = self.status(request_id, None)
      except BaseException:
        # Interrupted half-way (Ctrl-C in pytest, a dead server): the
        # command and the server go, and the next call starts a new one.
        _kill_group(pid)
        self._stop()
        raise
      out, err = (_read_text(paths[n]) for n in ("out", "err"))
    if timed_out:
      raise subprocess.TimeoutExpired(args, timeout, out, err)
    returncode = os.waitstatus_to_exitcode(status)
    return subprocess.CompletedProcess(args, returncode, out, err)

  def popen(self, args, *, cwd, env, **kwargs):
    """A `subprocess.Popen` of `args` forked from this server."""
    return ForkedPopen(self, args, cwd=cwd, env=env, **kwargs)

  def _stop(self):
    with self._send_lock:
      if self._proc is not None:
        self._proc.kill()
        self._proc.wait()
        self._proc = None


class ForkedPopen(subprocess.Popen):
  """A `subprocess.Popen` whose child a zygote forks: pipes, `poll`,
  `wait`, `communicate`, `send_signal` and `kill` as for any child; the exit
  status comes from the server, the child's parent."""

  def __init__(self, zygote, args, **kwargs):
    self._zygote = zygote
    self._request_id = None
    super().__init__(args, **kwargs)

  def _execute_child(
      self,
      args,
      executable,
      preexec_fn,
      close_fds,
      pass_fds,
      cwd,
      env,
      startupinfo,
      creationflags,
      shell,
      p2cread,
      p2cwrite,
      c2pread,
      c2pwrite,
      errread,
      errwrite,
      *unused,
  ):
    try:
      # -1: the stream is inherited, as a plain child's would be.
      fds = [
          fd if fd != -1 else inherited
          for fd, inherited in ((p2cread, 0), (c2pwrite, 1), (errwrite, 2))
      ]
      self._request_id, self.pid = self._zygote.spawn(
          args,
          cwd=cwd or os.getcwd(),
          env=os.environ if env is None else env,
          fds=fds,
      )
      self._child_created = True
    finally:
      self._close_pipe_fds(
          p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite
      )

  def _try_wait(self, wait_flags, _ask_only=False):
    blocking = not wait_flags & os.WNOHANG
    status = self._zygote.status(self._request_id, None if blocking else 0)
    if status is None and not _ask_only and _ended(self.pid):
      # A zombie, or reaped by the server: its status is on the way (a
      # plain child's `poll` sees a zombie's status too).
      status = self._zygote.status(self._request_id, None)
    return (0, 0) if status is None else (self.pid, status)

  def _internal_poll(self, _deadstate=None, **unused):
    if self.returncode is None and self._waitpid_lock.acquire(False):
      try:
        if self.returncode is None:
          # `__del__` and subprocess's clean-up (`_deadstate`) never wait.
          pid, status = self._try_wait(
              os.WNOHANG, _ask_only=_deadstate is not None
          )
          if pid:
            self._handle_exitstatus(status)
      except RuntimeError:
        # The server died: no status will come. `__del__` and
        # subprocess's clean-up pass `_deadstate`; anyone else hears why.
        if _deadstate is None:
          raise
        self.returncode = _deadstate
      finally:
        self._waitpid_lock.release()
    return self.returncode


def _ended(pid):
  """Whether child `pid` has exited: gone, or a zombie its parent (the
  server) has not reaped yet; what `wait_for_writers` goes by."""
  # Here, not at the top: the server runs this file as a script, before its
  # preloads and without the repository on its path.
  from official.io import atomic_write  # pylint: disable=import-outside-toplevel

  return not atomic_write.is_running(pid)


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
  """Forks a child per request and reports its pid, then its exit status;
  returns the request in the child, None in the server once the client has
  gone. One thread: SIGCHLD wakes the loop through a pipe."""
  sock = socket.socket(fileno=fd)
  wake_read, wake_write = os.pipe()
  os.set_blocking(wake_read, False)
  os.set_blocking(wake_write, False)
  signal.set_wakeup_fd(wake_write)
  signal.signal(signal.SIGCHLD, lambda *_: None)
  children = {}  # pid -> request id

  def send(reply):
    sock.send(json.dumps(reply).encode())

  while True:
    ready, _, _ = select.select([sock, wake_read], [], [])
    if wake_read in ready:
      try:
        os.read(wake_read, 4096)
      except BlockingIOError:
        pass
    while children:
      pid, status = os.waitpid(-1, os.WNOHANG)
      if pid == 0:
        break
      request_id = children.pop(pid, None)
      if request_id is not None:  # not one the server forked: ignored
        send({"id": request_id, "status": status})
    if sock not in ready:
      continue
    message, fds, _, _ = socket.recv_fds(sock, _MAX_MESSAGE, 3)
    if not message:
      return None
    request = json.loads(message)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
      signal.set_wakeup_fd(-1)
      signal.signal(signal.SIGCHLD, signal.SIG_DFL)
      for own in (wake_read, wake_write):
        os.close(own)
      sock.close()
      request["fds"] = fds
      return request
    for received in fds:
      os.close(received)
    # Also set by the child: whichever runs first, the group exists before
    # the client may signal it.
    try:
      os.setpgid(pid, pid)
    except (PermissionError, ProcessLookupError):
      pass  # the child has already exec'd or exited
    children[pid] = request["id"]
    send({"id": request["id"], "pid": pid})


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
  for key, value in request["env"].items():
    if value is None:
      os.environ.pop(key, None)
    else:
      os.environ[key] = value
  os.chdir(request["cwd"])
  for target, fd in enumerate(request["fds"]):
    os.dup2(fd, target)
  for fd in set(request["fds"]):
    if fd > 2:
      os.close(fd)
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

  # The preloaded modules live as long as the server and its children,
  # whose collections then never touch (and so never copy) the pages they
  # share with the server.
  with long_lived():
    for _name in sys.argv[2].split(","):
      importlib.import_module(_name)
  # Into the server's log: a client's error for a dead server quotes it.
  print(f"zygote {os.getpid()}: preloaded {sys.argv[2]}", file=sys.stderr)
  sys.stderr.flush()
  _request = _serve(int(sys.argv[1]))
  if _request is not None:
    sys.path.insert(0, "")
    _run_and_exit(_request)
