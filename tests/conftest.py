"""Test-session set-up shared by every test module.

Two logical CPU devices are configured before TensorFlow initialises its
runtime, so that MirroredStrategy tests run real multi-replica code on CPU.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # pylint: disable=g-import-not-at-top

_cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    _cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)
