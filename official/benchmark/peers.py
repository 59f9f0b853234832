"""Whether a benchmark's optional peers (PyTorch, transformers, onnxruntime)
are installed, found without importing them.

Importing PyTorch and transformers to find out costs seconds of CPU in each
benchmark run, and the peer then runs in worker processes of its own anyway.
A peer that is installed but cannot be imported fails in its worker, naming
the error, instead of being left out of the report without a word.
"""

import importlib.util


def installed(*modules: str) -> bool:
  """Whether every one of `modules` (top-level names) is installed."""
  return all(importlib.util.find_spec(m) is not None for m in modules)
