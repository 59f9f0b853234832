"""File I/O: every file-system call, local or on tf.io.gfile (files; ram_fs,
the in-memory stand-in made exact; remote, the one-line refusals of object
stores), atomic writes on it (atomic_write), TFRecord framing without
TensorFlow (tfrecord), HTTP downloads that resume and verify (download),
rows of CSV, TSV and JSON Lines files (table_rows)."""
