"""official.benchmark.turns: workers in their own processes, taking turns."""

import sys
import textwrap
import time

import pytest

from tests import helpers

from official.benchmark import turns

# A worker that takes `seconds` from its argv in order and sleeps nothing: it
# reports the request it got in its final line, so order can be checked.
_SCRIPT = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {root!r})
    from official.benchmark import turns
    seen = []
    def run(request):
      seen.append(request)
      time.sleep(0.001)
    turns.serve(run, {{"name": sys.argv[1]}}, lambda: {{"seen": seen}})
"""
)


def _worker(name, root):
  return turns.Worker(
      name, [sys.executable, "-c", _SCRIPT.format(root=root), name]
  )


@pytest.fixture
def root():
  return helpers.REPO


def test_worker_protocol(root):
  worker = _worker("a", root)
  assert worker.info == {"name": "a"}
  assert 0.001 <= worker.time("x") < 5
  assert worker.time("y") > 0
  final = worker.close()
  assert final["seen"] == ["x", "y"]
  assert final["peak_rss_mb"] > 1


def test_a_worker_reports_its_own_peak_rss_not_its_parents(root):
  # ru_maxrss survives execve: a worker started from a large parent used
  # to report the parent's size. 400 MB touched here; the worker is small.
  ballast = bytearray(400 * 2**20)
  ballast[::4096] = b"x" * len(ballast[::4096])
  worker = _worker("small", root)
  worker.time("x")
  final = worker.close()
  assert 1 < final["peak_rss_mb"] < 200, final
  assert turns.peak_rss_mb() > 400
  del ballast


def test_a_dead_worker_is_one_error_line(root):
  del root
  with pytest.raises(turns.WorkerError, match=r"^bad: ValueError: boom$"):
    turns.Worker("bad", [sys.executable, "-c", "raise ValueError('boom')"])


class _Fake:

  def __init__(self, name, seconds, calls):
    self.name, self.seconds, self.calls = name, iter(seconds), calls

  def time(self, request):
    self.calls.append((self.name, request))
    return next(self.seconds)


def test_rounds_rotate_and_ratios_are_paired():
  calls = []
  a, b = _Fake("a", [1.0, 2.0, 9.0], calls), _Fake("b", [2.0, 1.0, 3.0], calls)
  times = turns.take_turns([a, b], 3, request="1")
  assert calls == [
      ("a", "1"),
      ("b", "1"),
      ("b", "1"),
      ("a", "1"),
      ("a", "1"),
      ("b", "1"),
  ]
  assert times == {"a": [1.0, 2.0, 9.0], "b": [2.0, 1.0, 3.0]}
  # Per-round ratios 0.5, 2, 3: median 2 (the ratio of the medians is 1).
  assert turns.paired_ratio(times, "a", "b") == 2.0


def test_each_call_waits_for_the_last_ones_threads_to_settle():
  # A pause before every call (a spinning thread pool of the worker before
  # has gone quiet by then); not part of any timing.
  starts = []

  class Clocked(_Fake):

    def time(self, request):
      starts.append(time.monotonic())
      return super().time(request)

  calls = []
  workers = [Clocked(n, [1.0] * 2, calls) for n in "abc"]
  turns.take_turns(workers, 2, settle=0.03)
  gaps = [b - a for a, b in zip(starts, starts[1:])]
  assert len(gaps) == 5 and min(gaps) >= 0.03
