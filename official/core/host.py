"""The machine this process runs on, as the data pipelines size themselves
to it: how many of its cores the process may use."""

import os


def available_cores() -> int:
  """Logical CPUs this process may run on (its affinity mask on Linux)."""
  try:
    return len(os.sched_getaffinity(0))
  except AttributeError:  # Not on Linux.
    return os.cpu_count() or 1
