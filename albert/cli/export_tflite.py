r"""TFLite export: `python -m albert.export_tflite`.

  # the pretrained encoder (pooled_output, sequence_output)
  python -m albert.export_tflite --model_dir=runs/base --output=encoder.tflite \
      [--seq_length=128] [--precision=float32|dynamic_int8]
  # a fine-tuned model, from its recipe: sentence classification (logits,
  # probabilities), regression (score) or token classification (logits,
  # probabilities per token)
  python -m albert.export_tflite --model_dir=runs/mydata \
      --gin_file=gin/finetune/text_classification.gin --gin_file=gin/base.gin \
      --output=mydata.tflite --precision=dynamic_int8

The flatbuffer's `serving_default` signature runner takes int32 [B, seq_length]
`input_word_ids`, `input_mask`, `input_type_ids`; tokenise with the
`preprocessing` SavedModel or SentencePiece (TF-Text's ops have no TFLite
kernels). `dynamic_int8` stores int8 weights (about a third of the size).
SQuAD and RACE models are served as SavedModels only.

`python tools/benchmark_tflite.py` times both precisions against the
SavedModel at batch 1.
"""

import os
from typing import Sequence

from absl import flags
from absl import logging

from albert import cli
from albert.finetuning import training as finetuning
from albert import model_dir as model_dir_lib
from albert.registry import fetch as registry
from albert.serving import tflite_export
from official.errors import InputError
from official.io import files

MODEL_DIR = flags.DEFINE_string(
    "model_dir",
    None,
    "Model directory to export, or a released model's name (albert-fetch "
    "--list).",
)
CHECKPOINT = flags.DEFINE_string(
    "checkpoint", None, "Checkpoint (default: latest in --model_dir)."
)
OUTPUT = flags.DEFINE_string("output", None, "The .tflite file to write.")
SEQ = flags.DEFINE_integer(
    "seq_length",
    None,
    "Input length (default: the fine-tuning task's, or 128 for an encoder).",
)
PRECISION = flags.DEFINE_enum(
    "precision", "float32", tflite_export.PRECISIONS, "Weights of the model."
)
GIN_FILES = flags.DEFINE_multi_string(
    "gin_file",
    [],
    "A fine-tuning recipe and size: export that task's classifier. Without "
    "them, the pretrained encoder of --model_dir is exported.",
)
GIN_PARAMS = flags.DEFINE_multi_string("gin_param", [], "Extra gin bindings.")


def main(argv: Sequence[str]) -> None:
  cli.unexpected_arguments(argv)
  cli.require_flags("model_dir", "output")
  output = OUTPUT.value
  if files.isdir(output):
    raise InputError(f"--output={output} is a directory: name the .tflite file")
  directory = os.path.dirname(output) or "."
  if not files.isdir(directory):
    raise InputError(
        f"--output={output}: directory {directory} does not exist; create it"
    )
  model_dir_path = registry.resolve(MODEL_DIR.value)
  if not files.isdir(model_dir_path):
    raise InputError(f"--model_dir={MODEL_DIR.value} does not exist")
  if GIN_FILES.value or finetuning.is_finetuned_dir(model_dir_path):
    task, model, _ = finetuning.load_trained(
        model_dir=model_dir_path,
        checkpoint=CHECKPOINT.value,
        gin_file=GIN_FILES.value,
        gin_param=GIN_PARAMS.value,
    )
    try:
      outputs = tflite_export.finetuned_outputs(task, model)
    except ValueError as e:
      raise InputError(f"--gin_file: {e}") from None
    seq_length = SEQ.value or task.seq_length
    encoder = model.encoder
  else:
    pretrainer = model_dir_lib.load_pretrainer(
        model_dir_path, CHECKPOINT.value
    )[0]
    model = encoder = pretrainer.encoder
    settings = model_dir_lib.read_embedding(model_dir_path)
    outputs = (
        tflite_export.embedding_outputs(settings)
        if settings
        else tflite_export.encoder_outputs
    )
    seq_length = SEQ.value or 128
  limit = encoder.config.max_position_embeddings
  if not 2 <= seq_length <= limit:
    raise InputError(
        f"--seq_length={seq_length}: the model takes 2 to {limit} tokens"
    )
  flatbuffer = tflite_export.convert(
      model, outputs, seq_length=seq_length, precision=PRECISION.value
  )
  tflite_export.write(output, flatbuffer)
  logging.info(
      "Wrote %s: %.1f MB, %s weights, inputs int32 [batch, %d]",
      output,
      len(flatbuffer) / 1e6,
      PRECISION.value,
      seq_length,
  )


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
