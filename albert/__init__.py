"""ALBERT (Lan et al., ICLR 2020) for TensorFlow 2 / Keras 2."""

# Before any TensorFlow import: official/__init__.py sets TensorFlow's runtime
# defaults (oneDNN kernels on every x86 CPU).
import official  # noqa: F401
