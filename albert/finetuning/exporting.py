"""`--mode=export` of fine-tuning: a task's raw-text serving SavedModel, or its
ONNX model (float32 or int8)."""

import os

from absl import logging
import tensorflow as tf

from albert.finetuning.finetune_task import FinetuneTask
from albert.serving import onnx_export
from official.io import atomic_write


def export(
    task: FinetuneTask,
    model,
    export_dir: str,
    export_format="saved_model",
    quantize: str = "none",
) -> None:
  """Writes the task's raw-text serving SavedModel, or with
  `export_format="onnx"` EXPORT_DIR/model.onnx (token ids in; `quantize`:
  `onnx_export.write`'s), atomically."""
  onnx_export.check_quantize(
      quantize, export_format == "onnx", "--export_format"
  )
  if export_format == "onnx":  # an embedder's: pooled as its settings say
    with atomic_write.atomic_directory(export_dir) as tmp:
      path = os.path.join(tmp, "model.onnx")
      onnx_export.write(model, path, task.embedding_settings(), quantize)
    logging.info("Wrote the %s ONNX model to %s", task.name, export_dir)
    return
  module = task.serving_module(model, task.preprocessor())
  with atomic_write.atomic_directory(export_dir) as tmp:
    tf.saved_model.save(module, tmp, signatures=module.signatures())
  logging.info("Wrote the %s serving SavedModel to %s", task.name, export_dir)
