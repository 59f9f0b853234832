"""Dense layers over the last axis of a sequence, as 2-D products."""

import tensorflow as tf
import tf_keras


def dense(x: tf.Tensor, *layers: tf_keras.layers.Dense) -> tf.Tensor:
  """`layers[-1](...layers[0](x))` for x of shape [..., in] (static `in`),
  computed on x reshaped to [rows, in] and reshaped back to [..., units]
  at the end.

  Keras applies a Dense layer to a rank-3 input with `tf.tensordot`, whose
  shape arithmetic (about ten small ops) runs on every call and keeps the
  bias and activation apart from the product. On a 2-D input the layer is
  MatMul, BiasAdd and the activation, which TensorFlow's graph optimiser
  fuses into one kernel. The weights, their names and the values are the
  layers' own (the same checkpoint).
  """
  rank = x.shape.rank
  if rank is not None and rank <= 2:
    y = x
    for layer in layers:
      y = layer(y)
    return y
  leading = tf.shape(x)[:-1]
  y = tf.reshape(x, [-1, x.shape[-1]])  # [rows, in]
  for layer in layers:
    y = layer(y)
  return tf.reshape(y, tf.concat([leading, [layers[-1].units]], axis=0))
