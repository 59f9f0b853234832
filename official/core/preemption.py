"""Preemption: on SIGTERM or SIGINT the trainer saves and stops.

Cloud TPUs, spot GPUs and batch schedulers send SIGTERM and kill the process
a grace period later. While `Trainer.train` runs it holds a `SignalWatch`:
the signal does not end the process; the compiled training loop asks
`SignalWatch.poll` after every step (the Python handler itself only runs
once TensorFlow hands the main thread back, so the signal is read from
Python's wakeup file descriptor, which the C-level handler writes at once),
stops after the step in flight, and the trainer saves a checkpoint of that
step (model, optimizer and so the input position) and raises `Preempted`.
The commands exit with `Preempted.exit_code` (75, sysexits.h EX_TEMPFAIL);
rerunning the same command resumes bit-exact, as from a periodic
checkpoint. Under a multi-worker strategy the workers agree (an all-reduce of
the flag) on the step to stop at.

If the step in flight and the save do not end within `grace_seconds` of the
signal, the process exits at once with 128 + the signal number, as an
unhandled signal would, keeping the newest complete checkpoint. A second
SIGINT (Ctrl-C twice) interrupts at once. A signal that comes after the last
step (during the final save or evaluation) lets those finish, then raises
`Preempted` too, so the command stops instead of going on to what follows.
"""

import os
import signal
import socket
import threading
from typing import Optional

from absl import logging

from official.errors import Preempted

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
    self._lock = threading.RLock()  # a handler may interrupt its holder
    self._previous = {}
    self._reader = self._writer = None
    self._previous_fd = -1
    self._timer = None
    self._interrupts = 0  # SIGINTs the Python-level handler has run for
    self._stopped = None  # bool variable: the workers' agreed decision

  def __enter__(self):
    self.received, self._interrupts = None, 0
    if self._stopped is not None:
      self._stopped.assign(False)
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

  def __exit__(self, exc_type, exc, traceback):
    if self._timer is not None:
      self._timer.cancel()  # stopped in time (or a caller goes on)
      self._timer = None
    if self._active:
      self._active = False
      try:
        for signum, handler in self._previous.items():
          # None: a handler installed from C, not restorable from Python.
          signal.signal(signum, signal.SIG_DFL if handler is None else handler)
      finally:
        self._previous.clear()
        signal.set_wakeup_fd(self._previous_fd)
        self._reader.close()
        self._writer.close()
    if exc_type is None and self.received is not None:
      # The signal came after the last step: training is saved and done,
      # but the caller asked to stop before whatever comes next.
      raise Preempted(
          f"stopped by {signal.Signals(self.received).name} after the last "
          "step was saved: run the same command again to finish"
      )

  def _handle(self, signum, frame):
    del frame
    if signum == signal.SIGINT:
      self._interrupts += 1
      if self._interrupts > 1:
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
      self._timer = threading.Timer(self.grace_seconds, self._expire, (signum,))
      self._timer.daemon = True
      self._timer.start()

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

    if self._stopped is None:
      with tf.init_scope():  # made once, outside any traced function
        self._stopped = tf.Variable(False, trainable=False)
    flag = tf.numpy_function(self.poll, [], tf.bool, stateful=True)
    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
      per_replica = run(lambda: tf.cast(flag, tf.int32), ())
      # Any worker signalled: the sum of the flags (ReduceOp has no MAX).
      flag = strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, None) > 0
    self._stopped.assign(flag)
    return flag

  def stopped(self) -> bool:
    """After a compiled loop: whether it stopped for a signal (to this
    worker or, under a multi-worker strategy, to any). Only the loop's
    decision counts, the same on every worker: a signal that comes between
    two loops stops the next one after its first step."""
    return self._stopped is not None and bool(self._stopped.numpy())

  def stop_message(self, step: int, checkpoint: Optional[str]) -> str:
    what = (
        signal.Signals(self.received).name
        if self.received is not None
        else "a signal to another worker"
    )
    return (
        f"stopped by {what} at step {step}, checkpoint {checkpoint} saved: "
        "run the same command again to resume"
    )
