"""The one place where tf.distribute strategies are built."""
