"""Worker: the matrix products of an ALBERT encoder alone, the floor under
its serving latency.

  python -m albert.benchmarks.workers.matmul_floor E H NUM_HEADS F LAYERS \
      SEQ_LENGTH BATCH_SIZE DTYPE [MIX_JSON]

The products of the embedding projection, then per layer those of attention
(queries, keys, scores, context, output) and the feed-forward block, then
the pooler, on random weights of DTYPE; no softmax, normalisation or
activation. Whichever of TensorFlow's kernels and XLA runs them faster is
timed; info: "xla". With MIX_JSON (`request_mix.write`'s file), each
request takes the next 1 or BATCH_SIZE texts' lengths and runs the products
at the longest of them, as the dynamic-length export pads a batch: the
floor under that export on the mix. TensorFlow's kernels only there (XLA
would compile once per length).
"""

import math
import sys
import time

import numpy as np
import tensorflow as tf

from albert.benchmarks.workers import request_mix
from albert.benchmarks.workers import serve_loop


def products_fn(rng, dtype, e, h, n, f, layers, seq):
  """The encoder's products: [batch, length, E] -> [batch, H], for any
  length up to `seq` (which scales the weights)."""
  d = h // n

  def weight(k, m, scale=1.0):
    # Scaled so that the chain keeps unit variance (no overflow or denormals).
    w = rng.standard_normal((k, m), dtype=np.float32) * scale / math.sqrt(k)
    return tf.Variable(tf.cast(w, dtype))

  proj, wq, wk = weight(e, h), weight(h, h, 1 / math.sqrt(d)), weight(h, h)
  wv, wo = weight(h, h, 1 / math.sqrt(seq)), weight(h, h)
  w1, w2, wp = weight(h, f), weight(f, h), weight(h, h)

  def products(x):
    batch, length = tf.shape(x)[0], tf.shape(x)[1]

    def heads(t):  # [B * T, H] -> [B, N, T, D]
      return tf.transpose(tf.reshape(t, [batch, length, n, d]), [0, 2, 1, 3])

    hidden = tf.matmul(tf.reshape(x, [-1, e]), proj)  # [B * T, H]
    for _ in range(layers):
      queries, keys = heads(tf.matmul(hidden, wq)), heads(tf.matmul(hidden, wk))
      scores = tf.matmul(queries, keys, transpose_b=True)  # [B, N, T, T]
      context = tf.matmul(scores, heads(tf.matmul(hidden, wv)))
      context = tf.transpose(context, [0, 2, 1, 3])  # [B, T, N, D]
      context = tf.reshape(context, [batch * length, h])
      hidden = tf.matmul(tf.matmul(tf.matmul(context, wo), w1), w2)
    return tf.matmul(tf.reshape(hidden, [batch, length, h])[:, 0], wp)

  return products


def median_seconds(f, x, calls=5):
  """The median seconds of `calls` calls of f(x), after one."""
  f(x)
  times = []
  for _ in range(calls):
    start = time.perf_counter()
    f(x).numpy()
    times.append(time.perf_counter() - start)
  return sorted(times)[calls // 2]


def main(argv):
  e, h, n, f, layers, seq, batch = map(int, argv[1:8])
  dtype = tf.as_dtype(argv[8])
  rng = np.random.default_rng(0)
  products = products_fn(rng, dtype, e, h, n, f, layers, seq)
  if len(argv) > 9:
    _serve_mix(products, request_mix.Mix(argv[9]), rng, dtype, e, seq, batch)
    return
  inputs = {
      b: tf.cast(rng.standard_normal((b, seq, e), dtype=np.float32), dtype)
      for b in (1, batch)
  }
  # The floor is whichever of TF's kernels or XLA runs the products faster
  # (TF at large shapes; XLA when per-op overhead dominates).
  compiled = {
      xla: tf.function(products, jit_compile=xla, autograph=False)
      for xla in (False, True)
  }
  xla = median_seconds(compiled[True], inputs[1]) < median_seconds(
      compiled[False], inputs[1]
  )

  def run(batch_size):
    compiled[xla](inputs[batch_size]).numpy()

  serve_loop.serve_batches(run, {"xla": xla}, batch)


def _serve_mix(products, mix, rng, dtype, e, seq, batch):
  """Serves `products` at each request's longest length of `mix`."""
  run_products = tf.function(
      products,
      input_signature=[tf.TensorSpec([None, None, e], dtype)],
      autograph=False,
  )
  full = tf.cast(rng.standard_normal((batch, seq, e), dtype=np.float32), dtype)
  shapes = {}  # (batch, length): its slice of `full`, made once

  def run(batch_size):
    key = (batch_size, max(mix.lengths(batch_size)))
    if key not in shapes:
      shapes[key] = tf.identity(full[: key[0], : key[1]])
    run_products(shapes[key]).numpy()

  serve_loop.serve_batches(run, {"xla": False}, batch, len(mix))


if __name__ == "__main__":
  main(sys.argv)
