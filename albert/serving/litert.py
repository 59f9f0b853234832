"""The TFLite interpreter: LiteRT's (`ai-edge-litert`), else TensorFlow's.

`tf.lite.Interpreter` is deprecated and leaving TensorFlow's Python package;
LiteRT is its successor (the `[litert]` extra, also in the development set).
Where LiteRT has no wheel (it publishes them for Linux and macOS arm64; the
extra installs it only there), TensorFlow's interpreter runs the same
flatbuffers.
"""

from typing import Tuple


def interpreter_class() -> Tuple[type, str]:
  """(the Interpreter class, which one: "ai_edge_litert X.Y.Z" or
  "tf.lite (TensorFlow X.Y.Z)")."""
  try:
    # pylint: disable-next=import-outside-toplevel
    from ai_edge_litert import interpreter as litert
    # pylint: disable-next=import-outside-toplevel
    from importlib import metadata

    return litert.Interpreter, (
        f"ai_edge_litert {metadata.version('ai-edge-litert')}"
    )
  except ImportError:
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    return tf.lite.Interpreter, f"tf.lite (TensorFlow {tf.__version__})"


def interpreter(**kwargs):
  """An interpreter of `model_path=` or `model_content=` (and
  `num_threads=`), LiteRT's where installed."""
  cls, _ = interpreter_class()
  return cls(**kwargs)
