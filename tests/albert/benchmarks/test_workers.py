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


def test_the_floor_runs_the_encoders_products_at_any_length():
  # matmul_floor's products against numpy, on weights drawn as it draws
  # them, at the full length and at a shorter one (a request of the mix).
  import numpy as np
  import tensorflow as tf

  from albert.benchmarks.workers import matmul_floor

  e, h, n, f, layers, seq = 4, 8, 2, 16, 2, 6
  d = h // n
  products = tf.function(
      matmul_floor.products_fn(
          np.random.default_rng(3), tf.float32, e, h, n, f, layers, seq
      ),
      input_signature=[tf.TensorSpec([None, None, e], tf.float32)],
  )
  rng = np.random.default_rng(3)

  def weight(k, m, scale=1.0):
    return rng.standard_normal((k, m), dtype=np.float32) * scale / np.sqrt(k)

  proj, wq, wk = weight(e, h), weight(h, h, 1 / np.sqrt(d)), weight(h, h)
  wv, wo = weight(h, h, 1 / np.sqrt(seq)), weight(h, h)
  w1, w2, wp = weight(h, f), weight(f, h), weight(h, h)
  for batch, length in ((2, seq), (3, 4)):
    x = np.random.default_rng(length).standard_normal((batch, length, e))
    x = x.astype(np.float32)

    def heads(t, batch=batch, length=length):  # [B * T, H] -> [B, N, T, D]
      return t.reshape(batch, length, n, d).transpose(0, 2, 1, 3)

    hidden = x.reshape(-1, e) @ proj
    for _ in range(layers):
      scores = heads(hidden @ wq) @ heads(hidden @ wk).transpose(0, 1, 3, 2)
      context = (scores @ heads(hidden @ wv)).transpose(0, 2, 1, 3)
      hidden = context.reshape(-1, h) @ wo @ w1 @ w2
    expected = hidden.reshape(batch, length, h)[:, 0] @ wp
    np.testing.assert_allclose(
        products(x).numpy(), expected, rtol=1e-4, atol=1e-5
    )
