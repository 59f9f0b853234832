"""What the benchmark commands measure (tools/benchmark_*.py are their fronts).

  training          pretraining steps per precision, ours against
                    transformers
  training_workers  the processes `training` times, one variant each
  serving           SavedModel latency and throughput per precision
  tflite            TFLite flatbuffers against the encoder SavedModel
  embedding         sentence embeddings against sentence-transformers and
                    the one-text-padded ONNX path
  data              pretraining-data generation against the original's
                    code path
  documents         the documents format's disk, its reader against the
                    Python reference and the examples reader, and a
                    resume's start-up
  python_reader     the documents reader in Python: the benchmark's
                    reference
  workers/          the processes `serving`, `tflite` and `embedding` time,
                    one module each

Each contestant runs in a process of its own, taking turns with its peer
(`official.benchmark.turns`); ratios come from the same run.
"""
