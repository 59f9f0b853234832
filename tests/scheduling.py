"""How the suite shares the two cores: test files run costliest first, and
the run ends with when each worker finished.

`pytest -n 2 --dist loadfile` gives each worker whole files, one at a time
as it frees up. By default pytest-xdist queues the files with the most
tests first, which left single heavy files (the demo run, the ablation) for
the end, one worker busy and the other idle. `make test` turns that order
off (`--no-loadscope-reorder`) and this plugin queues the files by their
measured cost, `file_costs.json` (longest first: the longest-processing-time
rule), so the last files to start are short ones. A file not measured yet
counts as `UNMEASURED_SECONDS`.

Refresh the costs after adding or changing heavy tests:

  .venv/bin/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder \
      --durations=0 --durations-min=0 -q tests/ > /tmp/durations.txt

(`--durations-min=0`: pytest leaves out tests under 5 ms otherwise, and a
file of only such tests would fall out and count as unmeasured.)
  .venv/bin/python -m tests.scheduling /tmp/durations.txt
"""

import collections
import json
import os
import re
import sys
import time

COSTS = os.path.join(os.path.dirname(__file__), "file_costs.json")
UNMEASURED_SECONDS = 10.0
_DURATION = re.compile(r"^([\d.]+)s (?:setup|call|teardown)\s+(\S+?)::")


def _costs():
  try:
    with open(COSTS, encoding="utf-8") as f:
      return json.load(f)["seconds"]
  except (OSError, ValueError, KeyError):
    return {}


def pytest_collection_modifyitems(config, items):
  """Files by measured cost, longest first; tests keep their order within
  a file."""
  del config
  costs = _costs()
  first = {}
  for index, item in enumerate(items):
    first.setdefault(item.location[0], index)

  def key(item):
    path = item.location[0]
    return (-costs.get(path, UNMEASURED_SECONDS), first[path])

  items.sort(key=key)


_START = time.time()


def pytest_sessionfinish(session):
  """A worker hands its finishing time to the controller."""
  output = getattr(session.config, "workeroutput", None)
  if output is not None:
    output["finished_at"] = time.time()
    output["cpu_seconds"] = time.process_time()


_finished = {}


def pytest_testnodedown(node, error):
  del error
  output = getattr(node, "workeroutput", {}) or {}
  if "finished_at" in output:
    _finished[node.gateway.id] = (
        output["finished_at"] - _START,
        output.get("cpu_seconds", 0.0),
    )


def pytest_terminal_summary(terminalreporter):
  if _finished:
    terminalreporter.write_line(
        "workers finished at: "
        + ", ".join(
            f"{worker} {seconds:.0f} s (its process: {cpu:.0f} CPU s)"
            for worker, (seconds, cpu) in sorted(_finished.items())
        )
    )


def main(argv):
  """Sums a `--durations=0` report per file into file_costs.json."""
  seconds = collections.Counter()
  with open(argv[1], encoding="utf-8") as f:
    for line in f:
      match = _DURATION.match(line.strip())
      if match:
        seconds[match.group(2)] += float(match.group(1))
  if not seconds:
    raise SystemExit(f"{argv[1]}: no --durations=0 lines in it")
  with open(COSTS + ".tmp", "w", encoding="utf-8") as f:
    json.dump(
        {
            "about": "seconds per test file, summed from a --durations=0 "
            "run; tests/scheduling.py orders the files by them",
            "seconds": {k: round(v, 1) for k, v in sorted(seconds.items())},
        },
        f,
        indent=1,
    )
    f.write("\n")
  os.replace(COSTS + ".tmp", COSTS)
  print(f"{COSTS}: {len(seconds)} files, {sum(seconds.values()):.0f} s")


if __name__ == "__main__":
  main(sys.argv)
