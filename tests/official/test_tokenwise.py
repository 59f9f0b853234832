"""`tokenwise.dense`: a Dense layer over the last axis as one 2-D product,
equal to the layer on the sequence and to numpy, at shapes known only when
the function runs."""

import numpy as np
import tensorflow as tf
import tf_keras

from official.modeling import tokenwise


def test_dense_on_a_sequence_is_the_layers_and_numpys():
  rng = np.random.default_rng(0)
  first = tf_keras.layers.Dense(6, activation="tanh")
  second = tf_keras.layers.Dense(3)
  x = rng.normal(size=(2, 5, 4)).astype(np.float32)
  first(x[:1, :1])  # build
  second(first(x[:1, :1]))

  @tf.function(input_signature=[tf.TensorSpec([None, None, 4], tf.float32)])
  def chained(inputs):
    return tokenwise.dense(inputs, first, second)

  got = chained(x).numpy()
  w1, b1 = (v.numpy() for v in first.weights)
  w2, b2 = (v.numpy() for v in second.weights)
  want = np.tanh(x @ w1 + b1) @ w2 + b2
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(
      got, second(first(x)).numpy(), rtol=1e-5, atol=1e-6
  )
  # Rank 4 and rank 2 as well.
  x4 = rng.normal(size=(2, 3, 5, 4)).astype(np.float32)
  np.testing.assert_allclose(
      tokenwise.dense(tf.constant(x4), first).numpy(),
      np.tanh(x4 @ w1 + b1),
      rtol=1e-5,
      atol=1e-6,
  )
  np.testing.assert_allclose(
      tokenwise.dense(tf.constant(x[0]), first).numpy(),
      np.tanh(x[0] @ w1 + b1),
      rtol=1e-5,
      atol=1e-6,
  )
  # Its graph has no tensordot shape arithmetic around the products.
  ops = {
      n.op for n in chained.get_concrete_function().graph.as_graph_def().node
  }
  assert "MatMul" in ops and "Prod" not in ops and "GatherV2" not in ops, ops


def test_a_shape_from_the_caller_replaces_the_inputs_own():
  rng = np.random.default_rng(1)
  layer = tf_keras.layers.Dense(3)
  x = rng.normal(size=(2, 5, 4)).astype(np.float32)
  want = layer(x).numpy()

  @tf.function(input_signature=[tf.TensorSpec([None, None, 4], tf.float32)])
  def given(inputs):
    # The shape read once (one Shape op), used for the output; the product
    # also takes a [rows, in] input as it is.
    dims = tokenwise.leading_dims(inputs, 2)
    shape = tokenwise.as_shape(dims + [3])
    flat = tf.reshape(inputs, [-1, 4])
    return tokenwise.dense(inputs, layer, shape=shape), tokenwise.dense(
        flat, layer, shape=shape
    )

  for got in given(x):
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
  ops = [n.op for n in given.get_concrete_function().graph.as_graph_def().node]
  assert ops.count("Shape") == 1 and "ConcatV2" not in ops, ops
  # Static sizes stay python ints: nothing to compute when the graph runs.
  static = tf.zeros([2, 5, 4])
  assert tokenwise.leading_dims(static, 2) == [2, 5]
  assert tokenwise.as_shape([2, 5, 3]) == [2, 5, 3]
