r"""TFLite export: `python -m albert.export_tflite`.

  # the pretrained encoder (pooled_output, sequence_output)
  python -m albert.export_tflite --model_dir=runs/base --output=encoder.tflite \
      [--seq_length=128] [--precision=float32|dynamic_int8]
  # a fine-tuned classifier (logits, probabilities), from its recipe
  python -m albert.export_tflite --model_dir=runs/mydata \
      --gin_file=gin/finetune/text_classification.gin --gin_file=gin/base.gin \
      --output=mydata.tflite --precision=dynamic_int8

The flatbuffer's `serving_default` signature runner takes int32 [B, seq_length]
`input_word_ids`, `input_mask`, `input_type_ids`; tokenise with the
`preprocessing` SavedModel or SentencePiece (TF-Text's ops have no TFLite
kernels). `dynamic_int8` stores int8 weights (about a third of the size).
"""

from typing import Sequence

from absl import flags
from absl import logging

from albert import cli
from albert import finetuning
from albert import model_dir as model_dir_lib
from albert.serving import tflite_export
from official.core.errors import InputError

MODEL_DIR = flags.DEFINE_string("model_dir", None, "Model directory to export.")
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
  for flag in (MODEL_DIR, OUTPUT):
    if not flag.value:
      raise InputError(f"--{flag.name} is required")
  if GIN_FILES.value:
    task = finetuning.build_task(
        gin_file=GIN_FILES.value, gin_param=GIN_PARAMS.value
    )
    directory = finetuning.best_seed_dir(MODEL_DIR.value)
    task.use_model_dir(directory)
    model = finetuning.trained_model(task, directory, CHECKPOINT.value)
    outputs = tflite_export.classifier_outputs
    seq_length = SEQ.value or task.seq_length
  else:
    pretrainer = model_dir_lib.load_pretrainer(
        MODEL_DIR.value, CHECKPOINT.value
    )[0]
    model = pretrainer.encoder
    outputs = tflite_export.encoder_outputs
    seq_length = SEQ.value or 128
  flatbuffer = tflite_export.convert(
      model, outputs, seq_length=seq_length, precision=PRECISION.value
  )
  tflite_export.write(OUTPUT.value, flatbuffer)
  logging.info(
      "Wrote %s: %.1f MB, %s, seq_length %d",
      OUTPUT.value,
      len(flatbuffer) / 1e6,
      PRECISION.value,
      seq_length,
  )


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
