"""Dense layers over the last axis of a sequence, as 2-D products."""

from typing import Optional, Sequence, Union

import tensorflow as tf
import tf_keras

# A shape as tf.reshape takes it: a list of python ints where every size is
# known when the graph is built, else one 1-D int32 tensor (`as_shape`).
Shape = Union[Sequence[int], tf.Tensor]


def leading_dims(x: tf.Tensor, count: int) -> list:
  """The first `count` sizes of x: python ints where static, else read
  from one `tf.shape(x)` (one Shape op for all of them)."""
  static = x.shape.as_list()[:count]
  dynamic = None
  dims = []
  for axis, size in enumerate(static):
    if size is None:
      if dynamic is None:
        dynamic = tf.shape(x)
      size = dynamic[axis]
    dims.append(size)
  return dims


def as_shape(dims: Sequence[Union[int, tf.Tensor]]) -> Shape:
  """dims as a shape to reuse across reshapes: the python ints themselves
  when all are static, else one int32 tensor (stacked once here, where
  tf.reshape would stack a list of sizes again on every call)."""
  if all(isinstance(d, int) for d in dims):
    return list(dims)
  return tf.stack(dims)


def dense(
    x: tf.Tensor,
    *layers: tf_keras.layers.Dense,
    shape: Optional[Shape] = None,
) -> tf.Tensor:
  """`layers[-1](...layers[0](x))` for x of shape [..., in] (static `in`),
  computed on x reshaped to [rows, in] and reshaped back to [..., units]
  at the end.

  Keras applies a Dense layer to a rank-3 input with `tf.tensordot`, whose
  shape arithmetic (about ten small ops) runs on every call and keeps the
  bias and activation apart from the product. On a 2-D input the layer is
  MatMul, BiasAdd and the activation, which TensorFlow's graph optimiser
  fuses into one kernel. The weights, their names and the values are the
  layers' own (the same checkpoint).

  Args:
    x: [..., in]; or already [rows, in] when `shape` is given.
    *layers: applied in order.
    shape: the output's shape when the caller knows it (an encoder computes
      its [B, T, H] once per call for all its layers instead of each product
      reading x's shape again): any shape of the same number of values as
      [rows, units] (e.g. [B, T, N, D] for attention heads); not checked
      against the layers' units beyond what tf.reshape checks. None: x's
      leading shape and the last layer's units.
  """
  rank = x.shape.rank
  if shape is None and (rank is None or rank > 2):
    shape = tf.concat([tf.shape(x)[:-1], [layers[-1].units]], axis=0)
  # A rank-2 x with no shape asked for needs no reshape either way.
  y = x if shape is None else tf.reshape(x, [-1, x.shape[-1]])  # [rows, in]
  for layer in layers:
    y = layer(y)
  return y if shape is None else tf.reshape(y, shape)
