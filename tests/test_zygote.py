"""A command forked from the test zygote (tests/zygote.py) behaves as the
same command in a fresh interpreter: arguments, paths, streams, exit codes,
threads and `atexit` at exit, signals and timeouts, run to its end
(`helpers.run`) or started (`helpers.start`)."""

import os
import signal
import subprocess
import threading
import time

import pytest
from official.io import atomic_write
from tests import helpers

pytestmark = pytest.mark.skipif(
    not helpers._ZYGOTES,  # pylint: disable=protected-access
    reason="ALBERT_TEST_ZYGOTE=0: every command is a plain subprocess",
)

# What a program sees of itself; printed by each probe below.
_SELF = (
    "import os, sys; "
    "print(__name__, sys.argv, sys.path[0], os.getcwd(), sys.stdin.read())"
)


def _both(args, **kwargs):
  """The command forked and in a fresh interpreter."""
  return (
      helpers.run(args, **kwargs),
      helpers.run(args, fork=False, **kwargs),
  )


def _same(forked, fresh):
  assert forked.returncode == fresh.returncode, (forked, fresh)
  assert forked.stdout == fresh.stdout
  assert forked.stderr == fresh.stderr


def test_code_module_and_script_see_what_a_fresh_interpreter_sees(tmp_path):
  (tmp_path / "probe_module.py").write_text(_SELF + "\nsys.exit(3)\n")
  script = tmp_path / "bin" / "probe_script.py"
  script.parent.mkdir()
  script.write_text(_SELF + "\nprint('to stderr', file=sys.stderr)\n")
  for args in (
      ["-c", _SELF, "a", "b c"],
      ["-m", "probe_module", "--flag=1"],
      [str(script), "x"],
  ):
    forked, fresh = _both(args, cwd=tmp_path, input="line one\nline two\n")
    _same(forked, fresh)
    assert "line two" in forked.stdout
  assert forked.stderr == "to stderr\n"


def test_exit_codes_messages_and_tracebacks():
  for code, returncode in (
      ("import sys; sys.exit('one line')", 1),
      ("raise SystemExit(7)", 7),
      ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", -9),
  ):
    forked, fresh = _both(["-c", code])
    _same(forked, fresh)
    assert forked.returncode == returncode
  # A traceback has the zygote's frames on top; the error is the same.
  forked, fresh = _both(["-c", "print('before'); 1 / 0"])
  assert forked.returncode == fresh.returncode == 1
  assert forked.stdout == fresh.stdout == "before\n"
  assert forked.stderr.startswith("Traceback (most recent call last):")
  last = forked.stderr.splitlines()[-1]
  assert (
      last
      == fresh.stderr.splitlines()[-1]
      == ("ZeroDivisionError: division by zero")
  )


def test_threads_and_atexit_finish_before_exit():
  code = (
      "import atexit, threading, time; "
      "atexit.register(print, 'atexit'); "
      "threading.Thread(target=lambda: (time.sleep(0.3), print('thread')))"
      ".start(); print('main')"
  )
  forked, fresh = _both(["-c", code])
  _same(forked, fresh)
  assert forked.stdout == "main\nthread\natexit\n"


def test_timeout_kills_the_command_and_its_children(tmp_path):
  pid_file = tmp_path / "grandchild"
  code = (
      "import subprocess, sys, time; "
      "p = subprocess.Popen([sys.executable, '-c', "
      "'import time; time.sleep(600)']); "
      f"open({str(pid_file)!r}, 'w').write(str(p.pid)); "
      "print('started', flush=True); time.sleep(120)"
  )
  with pytest.raises(subprocess.TimeoutExpired) as raised:
    helpers.run(["-c", code], timeout=3)
  assert raised.value.stdout == "started\n"
  grandchild = int(pid_file.read_text())
  # Gone, or a zombie its new parent has not reaped yet.
  try:
    with open(f"/proc/{grandchild}/stat") as f:
      assert f.read().split(") ")[1].startswith("Z")
  except FileNotFoundError:
    pass
  # The server carries on.
  assert helpers.run(["-c", "print(1)"]).stdout == "1\n"


def test_children_draw_their_own_random_numbers():
  for code in (
      "import numpy; print(numpy.random.rand())",
      "import random; print(random.random())",
  ):
    draws = {helpers.run(["-c", code]).stdout for _ in range(3)}
    assert len(draws) == 3, (code, draws)


def test_another_environment_or_option_gets_a_plain_subprocess():
  parent = "import os; print(os.getppid())"
  assert int(helpers.run(["-c", parent]).stdout) != os.getpid()
  for kwargs in (
      # Read when TensorFlow is imported, which the server has done.
      dict(env=dict(helpers.ENV, TF_NUM_INTEROP_THREADS="1")),
      dict(fork=False),
      dict(stdin=subprocess.DEVNULL),
  ):
    assert int(helpers.run(["-c", parent], **kwargs).stdout) == os.getpid()


def test_the_serving_environment_forks_from_a_server_of_tf_and_tf_text():
  # A "server" process (finetune_helpers.call_saved_model) has imported
  # TensorFlow and TF-Text, nothing of the package or the suite's stack.
  probe = (
      "import os, sys; import tensorflow, tensorflow_text; "
      "print(os.getppid() == %d, sorted({m.split('.')[0] for m in sys.modules} "
      "& {'albert', 'official', 'tests', 'gin', 'sentencepiece'}))"
      % os.getpid()
  )
  forked, fresh = _both(["-c", probe], env=helpers.SERVING_ENV)
  assert forked.returncode == fresh.returncode == 0, forked.stderr[-2000:]
  assert forked.stdout == "False []\n"  # a child of the zygote
  assert fresh.stdout == "True []\n"


def test_the_environment_read_at_run_time_reaches_the_command():
  code = "import os; print(os.environ.get('TF_CONFIG'), os.environ['ALBERT_X'])"
  env = dict(helpers.ENV, TF_CONFIG='{"task": {}}', ALBERT_X="x")
  forked, fresh = _both(["-c", code], env=env)
  _same(forked, fresh)
  assert forked.stdout == '{"task": {}} x\n'
  # ... and only that command's: the next one has the server's.
  code = "import os; print('TF_CONFIG' in os.environ)"
  assert helpers.run(["-c", code]).stdout == "False\n"


def _start_both(args, **kwargs):
  """The command started forked and in a fresh interpreter."""
  forked = helpers.start(args, **kwargs)
  fresh = helpers.start(args, fork=False, **kwargs)
  return forked, fresh


def test_started_commands_talk_exit_and_take_signals_as_fresh_ones():
  code = (
      "import os, sys; line = sys.stdin.readline(); "
      "print(line.upper(), os.environ['TF_CONFIG'], os.getppid() == %d, "
      "end=''); print('err', file=sys.stderr); sys.exit(5)" % os.getpid()
  )
  pipes = dict(
      stdin=subprocess.PIPE,
      stdout=subprocess.PIPE,
      stderr=subprocess.PIPE,
      text=True,
      env=dict(helpers.ENV, TF_CONFIG="{}"),
  )
  forked, fresh = _start_both(["-c", code], **pipes)
  assert type(forked) is not subprocess.Popen  # pylint: disable=unidiomatic-typecheck
  answers = [p.communicate("hello\n", timeout=120) for p in (forked, fresh)]
  assert answers[0] == ("HELLO\n {} False", "err\n")
  assert answers[1] == ("HELLO\n {} True", "err\n")
  assert forked.returncode == fresh.returncode == 5
  # Running until signalled: poll() says so, the pid is the program's own,
  # and the signal ends it as it ends a fresh one.
  code = "import sys, time; print('up', flush=True); time.sleep(600)"
  for sig in (signal.SIGTERM, signal.SIGKILL):
    both = _start_both(["-c", code], stdout=subprocess.PIPE, text=True)
    for process in both:
      assert process.stdout.readline() == "up\n"
      assert process.poll() is None
      with open(f"/proc/{process.pid}/cmdline", "rb") as f:
        assert f.read()  # a live process
      process.send_signal(sig)
      process.wait(timeout=60)
      process.stdout.close()
    assert [p.returncode for p in both] == [-sig, -sig]
  # poll() sees an exit without wait(), as soon as the pid is gone.
  forked = helpers.start(["-c", "pass"])
  deadline = time.time() + 60
  while forked.poll() is None:
    assert time.time() < deadline
    time.sleep(0.01)
  assert forked.returncode == 0
  with pytest.raises(ProcessLookupError):
    os.kill(forked.pid, 0)
  # ... and as soon as it has ended, before the server reaps it: a plain
  # child's poll() sees a zombie's status too (as waits for writers rely on).
  forked = helpers.start(["-c", "import time; time.sleep(0.5)"])
  server = helpers._ZYGOTES[0]._proc  # pylint: disable=protected-access
  os.kill(server.pid, signal.SIGSTOP)
  deadline = time.time() + 60
  resume = threading.Timer(1.0, os.kill, (server.pid, signal.SIGCONT))
  try:
    while atomic_write.is_running(forked.pid):  # a zombie: nobody reaps it
      assert time.time() < deadline
      time.sleep(0.01)
    resume.start()
    assert forked.poll() == 0  # waits for the server's word
  finally:
    resume.cancel()
    os.kill(server.pid, signal.SIGCONT)


def test_a_dead_server_fails_its_waiters_and_the_next_command_restarts_it():
  code = "import time; print('up', flush=True); time.sleep(600)"
  started = helpers.start(["-c", code], stdout=subprocess.PIPE, text=True)
  try:
    assert started.stdout.readline() == "up\n"
    server = helpers._ZYGOTES[0]._proc  # pylint: disable=protected-access
    server.kill()
    server.wait()
    # Its child can no longer be waited for: an error, not a hang.
    # The error quotes that server's own log (tests/zygote.py's last line).
    died = (
        rf"the test zygote died \(pid {server.pid}\); its output:\n"
        rf"[\s\S]*zygote {server.pid}: preloaded numpy,"
    )
    with pytest.raises(RuntimeError, match=died):
      started.wait(timeout=60)
    # The next command starts a new server, and the old child still fails
    # as it did, with the output of its own server.
    assert helpers.run(["-c", "print(2)"]).stdout == "2\n"
    with pytest.raises(RuntimeError, match=died):
      started.wait()
  finally:
    os.kill(started.pid, signal.SIGKILL)
    started.stdout.close()
