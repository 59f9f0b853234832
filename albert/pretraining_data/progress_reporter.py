"""`ProgressReporter`: counts, rate and ETA of a long run, on the log."""

import time
from typing import Optional

from absl import logging

from official.core.progress import format_duration as _duration


class ProgressReporter:
  """Logs documents, examples, examples/s, MB done and ETA, rate-limited.

  ETA assumes the remaining input bytes go as fast as those done so far.
  """

  def __init__(
      self,
      total_bytes: int,
      interval_seconds: float = 10.0,
      clock=time.monotonic,
  ):
    self._total = max(1, total_bytes)
    self._interval = interval_seconds
    self._clock = clock
    self._start = clock()
    self._last = None
    self.bytes_done = self.documents = self.examples = 0
    self._skipped_bytes = self._skipped_examples = 0

  def skip(self, num_bytes: int, documents: int, examples: int) -> None:
    """Counts work finished by an earlier run (not in the rate)."""
    self._skipped_bytes += num_bytes
    self._skipped_examples += examples
    self.bytes_done += num_bytes
    self.documents += documents
    self.examples += examples

  def update(
      self, num_bytes: int, documents: int, examples: int, force: bool = False
  ) -> Optional[str]:
    """Adds finished work; logs and returns the line when it is time."""
    self.bytes_done += num_bytes
    self.documents += documents
    self.examples += examples
    now = self._clock()
    if (
        not force
        and self._last is not None
        and (now - self._last < self._interval)
    ):
      return None
    self._last = now
    elapsed = max(now - self._start, 1e-9)
    fresh = self.bytes_done - self._skipped_bytes
    remaining = self._total - self.bytes_done
    eta = _duration(elapsed * remaining / fresh) if fresh > 0 else "?"
    line = (
        f"{self.documents:,} documents, {self.examples:,} examples, "
        f"{(self.examples - self._skipped_examples) / elapsed:,.0f} "
        "examples/s, "
        f"{self.bytes_done / 1e6:,.1f}/{self._total / 1e6:,.1f} MB, "
        f"elapsed {_duration(elapsed)}, ETA {eta}"
    )
    logging.info(line)
    return line
