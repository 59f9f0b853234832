"""Preemption: on SIGTERM or SIGINT the trainer saves and stops.

Cloud TPUs, spot GPUs and batch schedulers send SIGTERM and kill the process
a grace period later. While `Trainer.train` runs it holds a `SignalWatch`:
the signal does not end the process; the compiled training loop asks
`SignalWatch.poll` after every step (the Python handler itself only runs
once TensorFlow hands the main thread back, so the signal is read from
Python's wakeup file descriptor, which the C-level handler writes at once),
stops after the step in flight, and the trainer saves a checkpoint of that
step (model, optimizer and so the input position) and raises `Preempted`.
The commands exit with `EXIT_CODE`; rerunning the same command resumes
bit-exact, as from a periodic checkpoint. Under a multi-worker strategy the
workers agree (an all-reduce of the flag) on the step to stop at.

If the step in flight and the save do not end within `grace_seconds` of the
signal, the process exits at once with 128 + the signal number, as an
unhandled signal would, keeping the newest complete checkpoint. A second
SIGINT (Ctrl-C twice) interrupts at once.
"""

import os
import signal
import socket
import threading
from typing import Optional

from absl import logging

from official.errors import Preempted

# sysexits.h EX_TEMPFAIL: a temporary failure; rerunning the command resumes.
EXIT_CODE = Preempted.exit_code
SIGNALS = (signal.SIGTERM, signal.SIGINT)


class SignalWatch:
  """Catches SIGTERM and SIGINT while entered (in the main thread only).

  Args:
    grace_seconds: after the first signal, the process exits by itself this
      long later if the run has not stopped (0: never).
  """

  def __init__(self, grace_seconds: float = 30.0):
    if grace_seconds < 0:
      raise ValueError(
          f"TrainerConfig.preemption_grace_seconds={grace_seconds} must be "
          ">= 0"
      )
    self.grace_seconds = grace_seconds
    self.received: Optional[int] = None  # the first signal's number
    self._active = False
    self._lock = threading.Lock()
    self._previous = {}
    self._reader = self._writer = None
    self._previous_fd = -1

  def __enter__(self):
    self.received = None
    if threading.current_thread() is not threading.main_thread():
      return self  # signals reach the main thread only: nothing to watch
    self._reader, self._writer = socket.socketpair()
    self._reader.setblocking(False)
    self._writer.setblocking(False)
    self._previous_fd = signal.set_wakeup_fd(
        self._writer.fileno(), warn_on_full_buffer=False
    )
    for signum in SIGNALS:
      self._previous[signum] = signal.signal(signum, self._handle)
    self._active = True
    return self

  def __exit__(self, *exc_info):
    if not self._active:
      return
    self._active = False
    for signum, handler in self._previous.items():
      signal.signal(signum, handler)
    self._previous.clear()
    signal.set_wakeup_fd(self._previous_fd)
    self._reader.close()
    self._writer.close()

  def _handle(self, signum, frame):
    del frame
    if self.received is not None and signum == signal.SIGINT:
      raise KeyboardInterrupt  # the second Ctrl-C: stop now
    self._note(signum)

  def _note(self, signum: int) -> None:
    with self._lock:
      if self.received is not None:
        return
      self.received = signum
    logging.warning(
        "%s received: finishing the step in flight, then saving a "
        "checkpoint and stopping (grace period %g s)",
        signal.Signals(signum).name,
        self.grace_seconds,
    )
    if self.grace_seconds:
      timer = threading.Timer(self.grace_seconds, self._expire, (signum,))
      timer.daemon = True
      timer.start()

  def _expire(self, signum: int) -> None:
    logging.error(
        "the step in flight and its checkpoint took longer than the %g s "
        "grace period: exiting without them (the newest complete "
        "checkpoint stays)",
        self.grace_seconds,
    )
    logging.flush()
    os._exit(128 + signum)  # pylint: disable=protected-access

  def poll(self) -> bool:
    """Whether a signal came; callable from any thread (TensorFlow's)."""
    if self._active and self.received is None:
      try:
        data = self._reader.recv(64)
      except (BlockingIOError, OSError):
        data = b""
      for signum in data:
        if signum in SIGNALS:
          self._note(signum)
          break
    return self.received is not None

  def stop_flag(self, strategy, run):
    """In a compiled training loop (cross-replica context), after a step:
    a bool tensor, whether to stop; the same on every worker (`run(fn,
    args)` is the trainer's one call of `strategy.run`)."""
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    flag = tf.numpy_function(self.poll, [], tf.bool, stateful=True)
    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
      return flag
    per_replica = run(lambda: tf.cast(flag, tf.int32), ())
    return strategy.reduce(tf.distribute.ReduceOp.MAX, per_replica, None) > 0

  def stop_message(self, step: int, checkpoint: Optional[str]) -> str:
    name = signal.Signals(self.received).name
    return (
        f"stopped by {name} at step {step}, checkpoint {checkpoint} saved: "
        "run the same command again to resume"
    )
