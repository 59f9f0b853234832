"""Fused kernels for the training step: fewer passes over memory, fewer
activations kept.

Without XLA, TensorFlow runs a formula such as the GELU or a LayerNorm as
one kernel per operation, each a full pass over memory: the GELU's forward
and backward pass are 20 such passes over the [B, T, intermediate] tensor,
and in bfloat16 each pass converts every element twice. Measured on a 2-core
Xeon (AVX-512 BF16, AMX), one [4096, 3072] GELU forward plus backward took
118 ms in float32 and 167 ms in bfloat16 as separate kernels, 21 and 29 ms as
two XLA fusions. So:

- `gelu_tanh`, `feed_forward_gelu` (bias + GELU), `add_layer_norm`
  (residual add + LayerNorm) and `sparse_cross_entropy` run their
  element-wise chains as XLA fusions, one each way; the matrix products
  around them stay TensorFlow's (oneDNN).
- `feed_forward_gelu` and `attention` keep less for the backward pass: the
  GELU's output and the attention probabilities are recomputed, as
  `torch.compile`'s attention does. The recomputations wait for their
  gradient (a control dependency), or TensorFlow's executor would run them
  all early and keep them alive.

`TrainerConfig.fused_kernels` (on by default) switches them on while the
trainer traces its forward pass (`scope`), and a serving module may trace
its forward pass in `scope` too (a SavedModel then needs XLA's CPU JIT);
evaluation and the other exports trace the plain formulas. The fusions
compute in float32 (float64 for float64 inputs) and return the
input's dtype, so results can differ from the plain formulas' in the last
bits (XLA's tanh; no bfloat16 rounding between steps). Every backward pass is
written by hand; tests/official/test_fusion.py checks each against numpy and
autodiff, tests/albert/modeling/test_recompute.py a whole model's gradients.
What it saves: docs/performance.md "Fused kernels".
"""

import contextlib
import math

import tensorflow as tf
import tf_keras

# Not in TensorFlow's public API: whether a graph is compiled with XLA.
from tensorflow.python.ops import control_flow_util

_depth = [0]  # A global, not thread-local: replicas trace in their threads.


@contextlib.contextmanager
def scope(enabled: bool = True):
  """Fused kernels on (when `enabled`) for the layers traced inside."""
  _depth[0] += 1 if enabled else 0
  try:
    yield
  finally:
    _depth[0] -= 1 if enabled else 0


def enabled() -> bool:
  return _depth[0] > 0


def in_xla() -> bool:
  """Whether the graph being built is compiled with XLA (jit_compile)."""
  graph = tf.compat.v1.get_default_graph()
  return control_flow_util.GraphOrParentsInXlaContext(graph)


def after(gradients, *tensors):
  """`tensors` again, for a recomputation that must wait for `gradients`
  (a tensor or a list).

  Without XLA a control dependency: else TensorFlow's executor runs every
  call's recomputation as soon as its inputs exist and keeps them all alive.
  XLA drops control edges, and its common-subexpression elimination would
  merge the recomputation with the forward pass (keeping what it was meant
  to drop); there each tensor becomes `t + 0 * (an element of each
  gradient)`.
  """
  gradients = gradients if isinstance(gradients, (list, tuple)) else [gradients]
  with tf.control_dependencies(gradients):
    tensors = [tf.identity(t) for t in tensors]
  if in_xla():
    # Not an optimization barrier: XLA's CPU pipeline expands barriers
    # before it merges common subexpressions (tests/official/
    # test_fusion.py). For floats XLA keeps x * 0 (NaN for an infinite x),
    # and adding that zero changes no value; a non-finite gradient makes
    # the recomputation non-finite, as it makes the step's gradients.
    zero = tf.add_n([tf.reshape(g, [-1])[0] * 0 for g in gradients])
    tensors = [t + tf.cast(zero, t.dtype) for t in tensors]
  return tensors


def _compiled(fn):
  return tf.function(fn, jit_compile=True, autograph=False)


def _wide(x):
  """`x` in float32, or float64 if it is."""
  return tf.cast(x, tf.float64 if x.dtype == tf.float64 else tf.float32)


# --- GELU, tanh approximation --------------------------------------------

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_CUBIC = 0.044715


def gelu_tanh_inner(x):
  """tanh(sqrt(2 / pi) (x + 0.044715 x^3)), in x's dtype: the GELU is
  0.5 x (1 + this)."""
  return tf.tanh(_SQRT_2_OVER_PI * (x + _CUBIC * x * x * x))


def gelu_tanh_slope(x, inner):
  """d gelu / dx at x, given `inner` = gelu_tanh_inner(x)."""
  d_inner = (1.0 - inner * inner) * (
      _SQRT_2_OVER_PI * (1.0 + 3.0 * _CUBIC * x * x)
  )
  return 0.5 * (1.0 + inner) + 0.5 * x * d_inner


@_compiled
def _gelu_forward(x):
  x32 = _wide(x)
  return tf.cast(0.5 * x32 * (1.0 + gelu_tanh_inner(x32)), x.dtype)


@_compiled
def _gelu_backward(x, dy):
  x = _wide(x)
  dx = tf.cast(dy, x.dtype) * gelu_tanh_slope(x, gelu_tanh_inner(x))
  return tf.cast(dx, dy.dtype)


@_compiled
def _bias_gelu_forward(h, bias):
  """gelu(h + bias) in h's dtype. Not h + bias too: the backward pass adds
  the bias again, as a second output would be a second [M, F] buffer
  written (10 -> 8 ms a [4096, 3072] float32 call on the Xeon of
  docs/performance.md)."""
  return _gelu_forward(h + bias)


@_compiled
def _gelu_backward_and_bias(h, bias, dy):
  """(d pre, its sum over the rows: d bias) of gelu(pre), pre = h + bias."""
  dpre = _gelu_backward(h + bias, dy)
  rows = tf.range(tf.rank(dy) - 1)
  return dpre, tf.cast(tf.reduce_sum(_wide(dpre), axis=rows), dy.dtype)


def feed_forward_gelu(x, kernel1, bias1, kernel2, bias2):
  """gelu(x W1 + b1) W2 + b2 (the transformer FFN, tanh GELU).

  The backward pass keeps x and the product x W1 only; it recomputes the
  GELU's output for W2's gradient instead of keeping it ([..., F] per
  call). The bias add, the GELU and their gradients are two
  fusions; the four matrix products stay TensorFlow's.

  Args:
    x: [..., H]; kernel1 [H, F], bias1 [F], kernel2 [F, H'], bias2 [H'],
      all of one dtype.

  Returns:
    [..., H'] in x's dtype.
  """

  @tf.custom_gradient
  def fused(x, kernel1, bias1, kernel2, bias2):
    rows = tf.reshape(x, [-1, kernel1.shape[0]])  # [..., H] -> [M, H]
    h = tf.matmul(rows, kernel1)  # [M, F], kept
    inner = _bias_gelu_forward(h, bias1)
    out_shape = tf.concat([tf.shape(x)[:-1], tf.shape(kernel2)[1:]], 0)
    # The bias after the reshape, as in a Dense layer: Grappler would fuse
    # a BiasAdd right after the MatMul into oneDNN's fused product, which
    # was 100x slower in float16 on the Xeon of docs/performance.md.
    out = tf.nn.bias_add(
        tf.reshape(tf.matmul(inner, kernel2), out_shape), bias2
    )

    def gradient(dy):
      dy = tf.reshape(dy, [-1, kernel2.shape[1]])  # [M, H']
      inner = _bias_gelu_forward(after(dy, h)[0], bias1)  # recomputed
      dinner = tf.matmul(dy, kernel2, transpose_b=True)  # [M, F]
      dpre, dbias1 = _gelu_backward_and_bias(h, bias1, dinner)
      dx = tf.reshape(tf.matmul(dpre, kernel1, transpose_b=True), tf.shape(x))
      return (
          dx,
          tf.matmul(rows, dpre, transpose_a=True),
          dbias1,
          tf.matmul(inner, dy, transpose_a=True),
          tf.reduce_sum(dy, axis=0),
      )

    return out, gradient

  return fused(x, kernel1, bias1, kernel2, bias2)


@tf.custom_gradient
def gelu_tanh(x):
  """0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), one fusion each way."""
  return _gelu_forward(x), lambda dy: _gelu_backward(x, dy)


# --- Residual add + LayerNorm over the last axis --------------------------


def _normalized(x, residual, epsilon):
  """(x + residual - mean) * rsqrt(var + epsilon), and that rsqrt; float32."""
  z = tf.cast(x, tf.float32) + tf.cast(residual, tf.float32)
  mean = tf.reduce_mean(z, axis=-1, keepdims=True)
  centered = z - mean
  variance = tf.reduce_mean(centered * centered, axis=-1, keepdims=True)
  rstd = tf.math.rsqrt(variance + epsilon)
  return centered * rstd, rstd


@_compiled
def _add_layer_norm_forward(x, residual, gamma, beta, epsilon):
  normalized, _ = _normalized(x, residual, epsilon)
  return normalized * gamma + beta


@_compiled
def _add_layer_norm_backward(x, residual, gamma, epsilon, dy):
  """(d x, d residual, d gamma, d beta). d residual is d x (the same tensor)
  when their dtypes agree: a second output of a fusion is a second buffer
  written, 5 of the 15 ms of a [4096, 768] float32 call on the Xeon of
  docs/performance.md."""
  normalized, rstd = _normalized(x, residual, epsilon)
  rows = tf.range(tf.rank(dy) - 1)
  dgamma = tf.reduce_sum(dy * normalized, axis=rows)
  dbeta = tf.reduce_sum(dy, axis=rows)
  dn = dy * gamma  # d loss / d normalized
  dz = rstd * (
      dn
      - tf.reduce_mean(dn, axis=-1, keepdims=True)
      - normalized * tf.reduce_mean(dn * normalized, axis=-1, keepdims=True)
  )
  dx = tf.cast(dz, x.dtype)
  if residual.dtype == x.dtype:
    return dx, dgamma, dbeta
  return dx, tf.cast(dz, residual.dtype), dgamma, dbeta


def add_layer_norm(x, residual, gamma, beta, epsilon: float):
  """LayerNorm(x + residual) * gamma + beta over the last axis, float32.

  Args:
    x, residual: [..., H] of any float dtypes; added in float32.
    gamma, beta: [H] float32.
    epsilon: added to the variance.

  Returns:
    [..., H] float32, as `tf_keras.layers.LayerNormalization` in float32 of
    `float32(x) + float32(residual)`.
  """
  epsilon = tf.constant(epsilon, tf.float32)

  @tf.custom_gradient
  def fused(x, residual, gamma, beta):
    y = _add_layer_norm_forward(x, residual, gamma, beta, epsilon)

    def gradient(dy):
      grads = _add_layer_norm_backward(x, residual, gamma, epsilon, dy)
      if residual.dtype == x.dtype:  # one d z for both
        dz, dgamma, dbeta = grads
        return dz, dz, dgamma, dbeta
      return grads

    return y, gradient

  return fused(x, residual, gamma, beta)


def residual_layer_norm(
    layer: tf_keras.layers.LayerNormalization, x, residual
) -> tf.Tensor:
  """`layer(float32(x) + float32(residual))` for a float32 LayerNorm over
  the last axis with its scale and centre: fused (`add_layer_norm`) when
  the kernels are on, else `plain_layer_norm`. An unbuilt layer is built by
  its own call (its weights' names), the value still computed here."""
  z = tf.cast(x, tf.float32) + tf.cast(residual, tf.float32)
  first = None if layer.built else layer(z)  # builds it
  if not (
      layer.axis in ([-1], [x.shape.rank - 1]) and layer.scale and layer.center
  ):
    return layer(z) if first is None else first
  if enabled():
    return add_layer_norm(x, residual, layer.gamma, layer.beta, layer.epsilon)
  return plain_layer_norm(z, layer.gamma, layer.beta, layer.epsilon)


def plain_layer_norm(z, gamma, beta, epsilon: float) -> tf.Tensor:
  """LayerNorm of float32 `z` over its last axis: the value of
  `tf_keras.layers.LayerNormalization` (within float32 round-off) in nine
  kernels, seven over the whole tensor, where that layer runs eleven and
  eight at ALBERT's epsilon of 1e-12 (too small for TensorFlow's fused
  kernel); 0.7x its time at [1, 36, 768] (docs/performance.md)."""
  mean = tf.reduce_mean(z, axis=-1, keepdims=True)
  centred = z - mean
  variance = tf.reduce_mean(tf.square(centred), axis=-1, keepdims=True)
  return beta + centred * (tf.math.rsqrt(variance + epsilon) * gamma)


# --- Scaled dot-product attention, probabilities recomputed ---------------


@_compiled
def _scaled_scores(scores, key_bias, scale):
  """float32(scores) * scale + key_bias: one pass, not three."""
  return tf.cast(scores, tf.float32) * scale + key_bias


@_compiled
def _softmax_backward(dprobs, probs, dot, scale):
  """d scores of softmax(scores * scale), given d probs, the float32
  probabilities and each row's sum(d probs * probs) (`dot`, [..., 1]): one
  element-wise pass (seven kernels as separate ones), in dprobs' dtype."""
  d = tf.cast(dprobs, tf.float32)
  return tf.cast((d - dot) * (probs * scale), dprobs.dtype)


@_compiled
def _row_dot(dcontext, context):
  """sum(d probs * probs) of each score row, from the [B, T, N, D] context
  and its gradient: sum_s (dc_t . v_s) p_ts = dc_t . sum_s p_ts v_s =
  dc_t . context_t (as FlashAttention's backward pass), a sum over D
  values instead of over the row's S scores. [B, N, T, 1] float32."""
  dot = tf.reduce_sum(
      tf.cast(dcontext, tf.float32) * tf.cast(context, tf.float32), axis=-1
  )  # [B, T, N]
  return tf.transpose(dot, [0, 2, 1])[..., tf.newaxis]


def attention(q, k, v, key_bias, scale: float):
  """softmax(q k^T * scale + key_bias) v (Vaswani et al., 2017, 3.2.1).

  The [B, N, T, S] probabilities are not kept for the backward pass: it
  multiplies q by k again and recomputes them (one more product of the
  scores' size, against B x N x T x S values of memory per call, 1.2 GB
  for ALBERT-base at batch 8 x 512 in float32). The softmax stays
  TensorFlow's (oneDNN) kernel, in float32: XLA's CPU softmax, split into
  a fusion per reduction, measured several times slower at length 512. The
  work around it, scaling and masking the scores and the softmax's
  gradient, runs as XLA fusions; the gradient's row sums come from the
  context and its gradient (`_row_dot`), not from a pass over the scores.

  Args:
    q: [B, N, T, D] queries; k, v: [B, N, S, D], all of one dtype.
    key_bias: [B, 1, 1, S] float32, added to the scaled scores (0 for a
      key to attend to, a large negative number for padding).
    scale: the scores' factor, 1 / sqrt(D).

  Returns:
    [B, T, N, D] in q's dtype (heads next to each other, as the output
    projection reads them).
  """

  scale = tf.constant(scale, tf.float32)

  def probabilities(q, k):
    scores = tf.einsum("bntd,bnsd->bnts", q, k)  # [B, N, T, S]
    scores = _scaled_scores(scores, key_bias, scale)
    return tf.nn.softmax(scores, axis=-1)  # float32

  @tf.custom_gradient
  def fused(q, k, v):
    probs = probabilities(q, k)
    context = tf.einsum("bnts,bnsd->bntd", tf.cast(probs, v.dtype), v)
    # [B, T, N, D]: the copy the output projection keeps for its own
    # gradient, so that `gradient` holds no other.
    context = tf.transpose(context, [0, 2, 1, 3])

    def gradient(dcontext):  # [B, T, N, D]
      dc = tf.transpose(dcontext, [0, 2, 1, 3])  # [B, N, T, D]
      probs = probabilities(*after(dc, q, k))  # recomputed
      dv = tf.einsum("bnts,bntd->bnsd", tf.cast(probs, v.dtype), dc)
      dprobs = tf.einsum("bntd,bnsd->bnts", dc, v)
      # Ordered after the products. This was added against suspected
      # thread contention, which the measurement did not bear out (its
      # script had pruned the forward pass); the step timings in
      # docs/performance.md were taken with it, so it stays until measured
      # without.
      (dcontext,) = after(dprobs, dcontext)
      dot = _row_dot(dcontext, context)  # [B, N, T, 1]
      dscores = _softmax_backward(dprobs, probs, dot, scale)
      dq = tf.einsum("bnts,bnsd->bntd", dscores, k)
      dk = tf.einsum("bnts,bntd->bnsd", dscores, q)
      return dq, dk, dv

    return context, gradient

  return fused(q, k, v)


# --- Softmax cross-entropy against integer labels -------------------------


@_compiled
def _cross_entropy_forward(logits, labels):
  """(-log softmax(logits)[label], log-sum-exp) of each row, float32."""
  z = _wide(logits)
  peak = tf.reduce_max(z, axis=-1, keepdims=True)
  lse = tf.math.log(tf.reduce_sum(tf.exp(z - peak), axis=-1)) + peak[..., 0]
  picked = tf.gather(z, labels, batch_dims=labels.shape.rank)
  return lse - picked, lse


@_compiled
def _cross_entropy_backward(logits, labels, lse, dnll):
  """d logits = (softmax(logits) - one_hot(label)) * d nll, one pass."""
  z = _wide(logits)
  probs = tf.exp(z - lse[..., tf.newaxis])
  onehot = tf.one_hot(labels, tf.shape(z)[-1], dtype=z.dtype)
  return tf.cast((probs - onehot) * dnll[..., tf.newaxis], logits.dtype)


def sparse_cross_entropy(labels, logits) -> tf.Tensor:
  """-log softmax(logits)[labels] over the last axis, as
  `tf.nn.sparse_softmax_cross_entropy_with_logits`, in two XLA fusions: at
  ALBERT-base's masked-LM shape ([640, 30000]) forward plus backward took
  80 ms as TensorFlow's kernel and 27 ms fused, on the Xeon of
  docs/performance.md. Keeps the logits and each row's log-sum-exp (the
  kernel keeps its gradient, the logits' size).

  Args:
    labels: [...] integer, each in [0, V): unlike TensorFlow's kernel, an
      index outside is not an error here (XLA clamps it); the callers' data
      is checked against the vocabulary when it is read.
    logits: [..., V] float32 (or float64).

  Returns:
    [...] in logits' dtype.
  """
  labels = tf.cast(labels, tf.int32)

  @tf.custom_gradient
  def fused(logits):
    nll, lse = _cross_entropy_forward(logits, labels)

    def gradient(dnll):
      return _cross_entropy_backward(logits, labels, lse, dnll)

    return tf.cast(nll, logits.dtype), gradient

  return fused(logits)
