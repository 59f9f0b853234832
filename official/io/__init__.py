"""File I/O without TensorFlow: atomic writes, TFRecord framing, checksums."""
