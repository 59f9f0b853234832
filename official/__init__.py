"""Generic model-garden pieces: errors, the training loop and its checkpoints,
optimizers and schedules, strategies, atomic I/O, gin plumbing, benchmark
processes. Nothing in this package imports `albert`.

Importing it turns on TensorFlow's oneDNN CPU kernels unless the environment
already decides (`TF_ENABLE_ONEDNN_OPTS`). TensorFlow enables them by itself
only on CPUs with AVX-512; on AVX2 CPUs its default Eigen kernels multiply
float32 matrices about 1.4x slower (docs/performance.md). The variable is read
when TensorFlow loads, so this package must be imported before TensorFlow to
take effect; `TF_ENABLE_ONEDNN_OPTS=0` keeps TensorFlow's default.

It also makes `tensorflow.keras` the Keras 2 API this package is written in
(`tf_keras`), as `TF_USE_LEGACY_KERAS=1` does, unless the environment
already decides. Besides naming one Keras, that saves a start-up cost:
TensorFlow otherwise imports Keras 3 (and, where scikit-learn is installed,
Keras 3's scikit-learn wrappers) with every `import tensorflow`: the import
takes 0.70x its time without them where scikit-learn is installed, 0.91x
where it is not (docs/performance.md, "Start-up: importing TensorFlow").
Keras 3 stays importable as `keras`; `TF_USE_LEGACY_KERAS=0` keeps
TensorFlow's default.
"""

import os

# This distribution's `official` (albert-tf2), not tf-models-official's
# package of the same name: `albert` checks it when imported.
ALBERT_TF2 = True

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
