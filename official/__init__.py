"""Generic model-garden pieces: errors, the training loop and its checkpoints,
optimizers and schedules, strategies, atomic I/O, gin plumbing, benchmark
processes. Nothing in this package imports `albert`.

Importing it turns on TensorFlow's oneDNN CPU kernels unless the environment
already decides (`TF_ENABLE_ONEDNN_OPTS`). TensorFlow enables them by itself
only on CPUs with AVX-512; on AVX2 CPUs its default Eigen kernels multiply
float32 matrices about 1.4x slower (docs/performance.md). The variable is read
when TensorFlow loads, so this package must be imported before TensorFlow to
take effect; `TF_ENABLE_ONEDNN_OPTS=0` keeps TensorFlow's default.
"""

import os

# This distribution's `official` (albert-tf2), not tf-models-official's
# package of the same name: `albert` checks it when imported.
ALBERT_TF2 = True

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
