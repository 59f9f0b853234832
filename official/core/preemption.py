"""Preemption: on SIGTERM or SIGINT the trainer saves and stops.

Cloud TPUs, spot GPUs and batch schedulers send SIGTERM and kill the process
a grace period later. While `Trainer.train` runs it holds a `SignalWatch`:
the signal does not end the process. The compiled training loop never
asks (a callback into Python would stall every step on the host); the
trainer asks `SignalWatch.stop_requested` when a loop of `steps_per_loop`
steps has ended, saves a checkpoint of that step (model, optimizer and so
the input position) and raises `Preempted`. A signal therefore costs at
most the loop in flight. The commands exit with `Preempted.exit_code` (75,
sysexits.h EX_TEMPFAIL); rerunning the same command resumes bit-exact, as
from a periodic checkpoint. Under a multi-worker strategy the workers agree
on it (one all-reduce of the flag per loop, not per step).

While a loop runs, Python's own signal handler cannot run (TensorFlow holds
the main thread), so a thread reads the signal from Python's wakeup file
descriptor, which the C-level handler writes at once: the signal is logged
and the grace period starts when it arrives. If the loop in flight and the
save do not end within the grace period, the process exits with 128 + the
signal number, as an unhandled signal would, keeping the newest complete
checkpoint. The default grace period is sized from the run itself: twice
the time the loop in flight and a save should still take (from the run's
loops and saves so far) plus a minute; before the first loop has ended
there is no estimate and no limit. A second SIGINT (Ctrl-C twice) stops at
once. A signal that comes after the last step (during the final save or
evaluation) lets those finish, then raises `Preempted` too, so the command
stops instead of going on to what follows.
"""

import contextlib
import os
import select
import signal
import socket
import threading
import time
from typing import Callable, Iterator, Optional

from absl import logging

from official.errors import Preempted

SIGNALS = (signal.SIGTERM, signal.SIGINT)
# The automatic grace period: this many times the expected time left, plus
# the margin.
_GRACE_FACTOR = 2.0
_GRACE_MARGIN_S = 60.0
# A second Ctrl-C while the main thread is inside TensorFlow: the process
# exits this long after it unless Python's handler has raised by then.
_SECOND_INTERRUPT_S = 1.0


class LoopClock:
  """How long a run should still need to stop: the rest of the loop in
  flight, at the last loop's time per step, and the longest save so far.
  The trainer times its loops and saves with it; `SignalWatch` asks it
  when a signal comes."""

  def __init__(self, clock: Callable[[], float] = time.monotonic):
    self._clock = clock
    self._loop = None  # (start, steps) of the loop in flight
    self._step_seconds = None  # of the last loop
    self._longest_save = 0.0

  @contextlib.contextmanager
  def loop(self, steps: int) -> Iterator[None]:
    start = self._clock()
    self._loop = (start, steps)
    try:
      yield
    finally:
      self._loop = None
    self._step_seconds = (self._clock() - start) / steps

  @contextlib.contextmanager
  def save(self) -> Iterator[None]:
    start = self._clock()
    yield
    self._longest_save = max(self._longest_save, self._clock() - start)

  def time_left(self) -> Optional[float]:
    """Seconds; None outside a loop or before one has ended."""
    loop, step_seconds = self._loop, self._step_seconds
    if loop is None or step_seconds is None:
      return None
    start, steps = loop
    end = start + steps * step_seconds
    return max(0.0, end - self._clock()) + self._longest_save


class SignalWatch:
  """Catches SIGTERM and SIGINT while entered (in the main thread only).

  Args:
    grace_seconds: after the first signal, the process exits by itself this
      long later if the run has not stopped; None: sized from `time_left`
      (see the module docstring); 0: never.
    time_left: seconds the run should still need to stop (the loop in
      flight and a save), or None while unknown; read when a signal comes.
  """

  def __init__(
      self,
      grace_seconds: Optional[float] = None,
      time_left: Callable[[], Optional[float]] = lambda: None,
  ):
    if grace_seconds is not None and grace_seconds < 0:
      raise ValueError(
          f"TrainerConfig.preemption_grace_seconds={grace_seconds} must be "
          ">= 0 (or None: sized from the run)"
      )
    self.grace_seconds = grace_seconds
    self.time_left = time_left
    self.received: Optional[int] = None  # the first signal's number
    self._active = False
    self._lock = threading.RLock()  # a handler may interrupt its holder
    self._previous = {}
    self._reader = self._writer = None
    self._previous_fd = -1
    self._timer = None
    self._thread = None
    self._interrupts = 0  # SIGINTs the Python-level handler has run for
    self._fd_interrupts = 0  # SIGINTs read from the wakeup descriptor
    self._agree = None  # tf.function: the workers' all-reduce of the flag

  def __enter__(self):
    self.received, self._interrupts, self._fd_interrupts = None, 0, 0
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
    self._thread = threading.Thread(
        target=self._read_signals, name="SignalWatch", daemon=True
    )
    self._thread.start()
    return self

  def __exit__(self, exc_type, exc, traceback):
    if self._timer is not None:
      self._timer.cancel()  # stopped in time (or a caller goes on)
      self._timer = None
    if self._active:
      self._active = False
      self._thread.join()
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
        raise KeyboardInterrupt  # the second Ctrl-C: stop now (and unwind)
    self._note(signum)

  def _read_signals(self) -> None:
    """The watch's thread: notes each signal as the C-level handler writes
    it, while the main thread may be inside TensorFlow."""
    while self._active:
      ready, _, _ = select.select([self._reader], [], [], 0.1)
      if ready:
        self._take()

  def _take(self) -> None:
    try:
      data = self._reader.recv(64)
    except (BlockingIOError, OSError):
      return
    for signum in data:
      if signum not in SIGNALS:
        continue
      self._note(signum)
      if signum == signal.SIGINT:
        self._fd_interrupts += 1
        if self._fd_interrupts == 2:
          threading.Thread(target=self._interrupt, daemon=True).start()

  def _interrupt(self) -> None:
    """A second Ctrl-C: Python's handler raises KeyboardInterrupt as soon as
    the main thread runs Python; if TensorFlow still holds it, exit."""
    time.sleep(_SECOND_INTERRUPT_S)
    if self._active and self._interrupts < 2:  # Python's handler has not run
      logging.error("interrupted twice: stopping now, without a checkpoint")
      logging.flush()
      os._exit(128 + signal.SIGINT)  # pylint: disable=protected-access

  def _note(self, signum: int) -> None:
    with self._lock:
      if self.received is not None:
        return
      self.received = signum
    grace = self._grace()
    left = self.time_left()
    logging.warning(
        "%s received: finishing the loop in flight%s, then saving a "
        "checkpoint and stopping (%s)",
        signal.Signals(signum).name,
        "" if left is None else f" (about {left:.0f} s with the save)",
        f"grace period {grace:g} s" if grace else "no grace period limit",
    )
    if grace:
      self._timer = threading.Timer(grace, self._expire, (signum, grace))
      self._timer.daemon = True
      self._timer.start()

  def _grace(self) -> Optional[float]:
    if self.grace_seconds is not None:
      return self.grace_seconds or None
    left = self.time_left()
    if left is None:
      return None
    return _GRACE_FACTOR * left + _GRACE_MARGIN_S

  def _expire(self, signum: int, grace: float) -> None:
    logging.error(
        "the loop in flight and its checkpoint took longer than the %g s "
        "grace period: exiting without them (the newest complete "
        "checkpoint stays)",
        grace,
    )
    logging.flush()
    os._exit(128 + signum)  # pylint: disable=protected-access

  def poll(self) -> bool:
    """Whether a signal came (to this process)."""
    if self._active and self.received is None:
      self._take()
    return self.received is not None

  def stop_requested(self, strategy, run) -> bool:
    """After a compiled loop, on the host: whether to stop; the same on
    every worker. Under a multi-worker strategy one all-reduce of the flag
    (`run(fn, args)` is the trainer's one call of `strategy.run`)."""
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    flag = self.poll()
    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
      return flag
    if self._agree is None:

      def agree(local):
        per_replica = run(lambda: tf.identity(local), ())
        # Any worker signalled: the sum of the flags (ReduceOp has no MAX).
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, None)

      self._agree = tf.function(agree, autograph=False)
    return bool(self._agree(tf.constant(int(flag), tf.int32)).numpy() > 0)

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
