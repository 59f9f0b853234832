"""clipped_update: global-norm clipping of the summed gradient, in the step."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from official.distribute.strategy import make_strategy
from official.training.clipped_update import clipped_update


def test_clips_to_global_norm_and_returns_norm():
  w1 = tf.Variable([1.0, 2.0])
  w2 = tf.Variable([[0.5]])
  opt = tf_keras.optimizers.SGD(learning_rate=1.0)
  g1, g2 = tf.constant([3.0, 4.0]), tf.constant([[12.0]])  # norm 13
  norm = clipped_update(opt, [g1, g2], [w1, w2], clip_norm=1.0)
  assert float(norm) == pytest.approx(13.0)
  np.testing.assert_allclose(w1.numpy(), [1 - 3 / 13, 2 - 4 / 13], rtol=1e-6)
  np.testing.assert_allclose(w2.numpy(), [[0.5 - 12 / 13]], rtol=1e-6)


def test_small_gradients_and_disabled_clipping_pass_through():
  w = tf.Variable([1.0, 1.0])
  opt = tf_keras.optimizers.SGD(learning_rate=1.0)
  clipped_update(opt, [tf.constant([0.3, 0.4])], [w], clip_norm=1.0)
  np.testing.assert_allclose(w.numpy(), [0.7, 0.6], rtol=1e-6)
  clipped_update(
      opt,
      [tf.constant([30.0, 40.0]), None],
      [w, tf.Variable(0.0)],
      clip_norm=0.0,
  )
  np.testing.assert_allclose(w.numpy(), [-29.3, -39.4], rtol=1e-6)


def test_mirrored_clips_the_summed_gradient():
  """Two replicas with gradients (3, 0) and (0, 4): the sum has norm 5."""
  strategy = make_strategy("mirrored")
  with strategy.scope():
    w = tf.Variable([0.0, 0.0])
    opt = tf_keras.optimizers.SGD(learning_rate=1.0)

  @tf.function
  def step():
    def replica_fn():
      replica = tf.distribute.get_replica_context().replica_id_in_sync_group
      grad = tf.where(
          replica == 0, tf.constant([3.0, 0.0]), tf.constant([0.0, 4.0])
      )
      return clipped_update(opt, [grad], [w], clip_norm=1.0)

    return strategy.run(replica_fn)

  norms = strategy.experimental_local_results(step())
  assert [float(n) for n in norms] == pytest.approx([5.0, 5.0])
  np.testing.assert_allclose(w.numpy(), [-0.6, -0.8], rtol=1e-6)
