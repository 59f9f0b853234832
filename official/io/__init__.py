"""File I/O: every file-system call on tf.io.gfile (files, ram_fs), atomic
writes on it (atomic_write), TFRecord framing without TensorFlow (tfrecord)."""
