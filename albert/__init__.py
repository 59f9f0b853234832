"""ALBERT (Lan et al., ICLR 2020) for TensorFlow 2 / Keras 2."""

# Before any TensorFlow import: official/__init__.py sets TensorFlow's runtime
# defaults (oneDNN kernels on every x86 CPU).
import official  # noqa: F401

import os

# The checkout holding gin/ and tools/: where --gin_file paths are looked up.
# The package is installed in editable mode (`pip install -e .`, as `make`
# does), so this is the repository root.
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
