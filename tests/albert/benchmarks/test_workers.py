"""albert/benchmarks/workers: the benchmarks' processes import nothing of the
package but the turns protocol, so the SavedModel's process holds TensorFlow
and TF-Text only, as a serving process would."""

import ast
import json
import pathlib

from tests import helpers

WORKERS = pathlib.Path(helpers.REPO) / "albert" / "benchmarks" / "workers"
# What `python -m albert.benchmarks.workers.NAME` may load of albert and
# official: the packages on the way (albert/__init__.py's start-up checks)
# and the protocol.
ON_THE_WAY = {
    "albert",
    "albert.environment",
    "albert.benchmarks",
    "albert.benchmarks.workers",
    "official",
    "official.quiet_start",
    "official.benchmark",
    "official.benchmark.turns",
}


def _package_imports(path):
  """The albert and official modules `path` imports (`from a import b`:
  a.b)."""
  for node in ast.walk(ast.parse(path.read_text())):
    if isinstance(node, ast.Import):
      names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module:
      names = [f"{node.module}.{a.name}" for a in node.names]
    else:
      continue
    yield from (n for n in names if n.split(".")[0] in ("albert", "official"))


def test_workers_import_only_each_other_and_the_protocol():
  files = sorted(WORKERS.glob("*.py"))
  assert len(files) >= 8
  offenders = [
      f"{f.name}: {name}"
      for f in files
      for name in _package_imports(f)
      if name not in ("official.benchmark.turns", "albert.serving.litert")
      and not name.startswith("albert.benchmarks.workers.")
  ]
  assert not offenders, offenders


def test_the_saved_model_process_loads_tensorflow_and_the_protocol_only():
  # TensorFlow's own import loads a Keras (tf_keras, official/__init__.py
  # chooses; Keras 3 otherwise): the worker may load no more of it.
  script = """
import json, sys
import tensorflow, tensorflow_text
keras = {m for m in sys.modules if m.split(".")[0] in ("tf_keras", "keras")}
import albert.benchmarks.workers.saved_model
print(json.dumps([m for m in sys.modules
                  if m.split(".")[0] in ("albert", "official")
                  or m.split(".")[0] in ("tf_keras", "keras")
                  and m not in keras]))
"""
  run = helpers.run(["-c", script], fork=False, timeout=300)
  assert run.returncode == 0, run.stderr[-2000:]
  loaded = set(json.loads(run.stdout.strip().splitlines()[-1]))
  workers = {"saved_model", "serve_loop", "request_mix"}
  assert loaded == ON_THE_WAY | {
      f"albert.benchmarks.workers.{w}" for w in workers
  }, loaded
