"""`Progress`: rates and ETA for long loops, as one readable line."""

import time
from typing import Callable, Optional


def format_duration(seconds: float) -> str:
  """12345.6 -> '3:25:46'."""
  seconds = max(0, int(round(seconds)))
  return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class Progress:
  """Tracks units done against a total; reports the rate and the ETA.

  Args:
    total: units expected in all (None: unknown, no ETA).
    start: units already done before this run (e.g. a restored step).
    clock: a monotonic clock in seconds (tests pass a fake one).
  """

  def __init__(
      self,
      total: Optional[int],
      start: int = 0,
      clock: Callable[[], float] = time.monotonic,
  ):
    self.total = total
    self._clock = clock
    self._start_units = start
    self._start_time = clock()
    self.done = start

  def update(self, done: int) -> None:
    self.done = done

  @property
  def elapsed(self) -> float:
    return self._clock() - self._start_time

  @property
  def rate(self) -> float:
    """Units per second since this run started (0 before anything ran)."""
    elapsed = self.elapsed
    return (self.done - self._start_units) / elapsed if elapsed > 0 else 0.0

  @property
  def eta(self) -> Optional[float]:
    """Seconds left at the current rate, or None if unknown."""
    if self.total is None or self.rate <= 0:
      return None
    return max(0, self.total - self.done) / self.rate

  def describe(self, unit: str = "steps") -> str:
    eta = self.eta
    total = f"/{self.total}" if self.total is not None else ""
    return (
        f"{self.done}{total} {unit}, {self.rate:.2f} {unit}/s, ETA "
        f"{format_duration(eta) if eta is not None else '?'}"
    )
