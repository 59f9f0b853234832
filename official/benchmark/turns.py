"""Benchmarks whose contestants take turns, each in a process of its own.

A worker process builds what it times, warms it up, prints one JSON line of
information, then answers every request line on its stdin with the seconds of
one timed call, and when stdin closes prints one last JSON line (its peak RSS
and whatever else it reports) and exits. The parent starts workers, asks them
for one call each per round, in an order that rotates from round to round, so
that only one computes at a time and a change of machine load hits all of them
alike; ratios are medians of the per-round ratios.
"""

import json
import resource
import statistics
import subprocess
import sys
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple


class WorkerError(RuntimeError):
  """A worker died or answered nonsense; the message is its last error line."""


def peak_rss_mb() -> float:
  """This process's peak resident set size in MB: Linux's VmHWM, which a
  new program starts afresh. (`getrusage`'s ru_maxrss survives `execve`:
  a worker started by a parent of 1.3 GB reported at least 1.3 GB.)"""
  try:
    with open("/proc/self/status", encoding="ascii") as f:
      for line in f:
        if line.startswith("VmHWM:"):
          return int(line.split()[1]) / 1024.0  # kB
  except OSError:
    pass
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def serve(
    run: Callable[[str], None],
    info: Dict,
    final: Optional[Callable[[], Dict]] = None,
) -> None:
  """The worker side: announce `info`, time `run(request)` per stdin line.

  Args:
    run: one call to time; it gets the request line (without newline).
    info: printed as the first JSON line (after warm-up, which the caller
      has done).
    final: extra fields of the last JSON line (after stdin closes).
  """
  print(json.dumps(info), flush=True)
  for line in sys.stdin:
    start = time.perf_counter()
    run(line.strip())
    print(time.perf_counter() - start, flush=True)
  last = {"peak_rss_mb": peak_rss_mb()}
  if final is not None:
    last.update(final())
  print(json.dumps(last), flush=True)


class Worker:
  """The parent side of one worker process.

  Args:
    name: how reports and errors call this worker.
    argv: the worker's command line (it must end up in `serve`).
    env: its environment (None: this process's).
    wait: wait for its information line (False: `ready` waits; `start_all`
      starts several that load and warm up side by side).
  """

  def __init__(
      self,
      name: str,
      argv: Sequence[str],
      env: Optional[Dict[str, str]] = None,
      wait: bool = True,
  ):
    self.name = name
    self.process = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    self.info: Optional[Dict] = None
    if wait:
      self.ready()

  def ready(self) -> Dict:
    """Waits for the worker's information line (once); returns it."""
    if self.info is None:
      self.info = json.loads(self._read_line())
    return self.info

  def _read_line(self) -> str:
    line = self.process.stdout.readline()
    if not line:
      self.process.wait()
      error = (
          self.process.stderr.read().strip().splitlines()
          or [f"exited with code {self.process.returncode}"]
      )[-1]
      raise WorkerError(f"{self.name}: {error}")
    return line

  def time(self, request: str = "") -> float:
    """Seconds of one call of the worker's `run(request)`."""
    self.process.stdin.write(f"{request}\n")
    self.process.stdin.flush()
    line = self._read_line()
    try:
      return float(line)
    except ValueError:
      raise WorkerError(
          f"{self.name}: expected seconds, got {line.strip()[:200]!r}"
      ) from None

  def close(self) -> Dict:
    """Ends the worker; returns its last JSON line ({} if it had none)."""
    if self.process.poll() is not None:
      return {}
    self.process.stdin.close()
    line = self.process.stdout.readline()
    self.process.wait()
    try:
      return json.loads(line) if line else {}
    except json.JSONDecodeError:
      return {}

  def kill(self) -> None:
    if self.process.poll() is None:
      self.process.kill()
      self.process.wait()


def start_all(
    specs: Sequence[Tuple[str, Sequence[str]]],
) -> List[Worker]:
  """Workers of (name, argv) started together and waited for: their loading
  and warm-up overlap, which no timing includes. A worker that fails to
  start raises WorkerError after the others are killed."""
  workers = [Worker(name, argv, wait=False) for name, argv in specs]
  try:
    for w in workers:
      w.ready()
  except WorkerError:
    for w in workers:
      w.kill()
    raise
  return workers


# Seconds between one worker's call and the next one's. A runtime's thread
# pool may spin for a while after a call returns (onnxruntime's does by
# default): without a pause the worker after it in the order computes beside
# those threads, and a rotating order keeps the same worker after it in every
# round. Measured 2026-11-29 on the 2-core Xeon: the serving benchmark's
# products-alone worker, right after onnxruntime's int8 one, read 64.9 ms
# on the request mix against 40.2 ms in a run without onnxruntime.
SETTLE_SECONDS = 0.05


def take_turns(
    workers: Sequence[Worker],
    rounds: int,
    request: str = "",
    settle: float = SETTLE_SECONDS,
) -> Dict[str, List[float]]:
  """{name: [seconds per round]}: one call each per round, order rotating,
  `settle` seconds (untimed) before each call."""
  times = {w.name: [] for w in workers}
  workers = list(workers)
  for r in range(rounds):
    shift = r % len(workers)
    for w in workers[shift:] + workers[:shift]:
      if settle:
        time.sleep(settle)
      times[w.name].append(w.time(request))
  return times


def paired_ratio(times: Dict[str, List[float]], a: str, b: str) -> float:
  """Median over rounds of times[a] / times[b] (not a ratio of medians)."""
  return statistics.median(x / y for x, y in zip(times[a], times[b]))
