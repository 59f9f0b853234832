r"""Exports a trained ALBERT as SavedModels for serving, or as ONNX.

  python -m albert.run_export --model_dir=runs/base \
      --spm_model_file=spm.model --export_dir=exported [--seq_length=128] \
      [--precision=float32|bfloat16]
  python -m albert.run_export --model_dir=runs/base --export_dir=exported \
      --format=onnx [--quantize=int8]
  python -m albert.run_export --model_dir=runs/zh --vocab_file=vocab.txt \
      --export_dir=exported     # WordPiece (the Chinese ALBERTs)
  python -m albert.run_export --model_dir=albert_base_v2 --export_dir=exported
                                # a released model by name (albert-fetch):
                                # its tokenizer file comes with it

Writes, atomically (a temporary directory renamed when complete):
  EXPORT_DIR/encoder        hub-style encoder: serving_default and mlm
                            signatures
  EXPORT_DIR/preprocessing  raw strings -> encoder inputs (SentencePiece asset)
  EXPORT_DIR/serving        raw text end to end: serving_default, fill_mask,
                            sentence_order
Each loads with `tf.saved_model.load` in a process that imports only
tensorflow and tensorflow_text. --format=onnx writes EXPORT_DIR/encoder.onnx
instead: token ids in, sequence_output and pooled_output out, for
onnxruntime (the [onnx] extra); fine-tuned classifiers export with
`python -m albert.run_finetuning --mode=export --export_format=onnx`.
"""

import os
from typing import Sequence

from absl import flags
from albert import cli
from albert.serving import exporter
from albert.serving import onnx_export
from albert.text import tokenizers
from albert import model_dir
from albert.registry import fetch as registry
from official.errors import InputError
from official.io import atomic_write
from official.io import files

MODEL_DIR = flags.DEFINE_string(
    "model_dir",
    None,
    "Model directory to export, or a released model's name (albert-fetch "
    "--list) or hf://OWNER/REPO.",
)
CHECKPOINT = flags.DEFINE_string(
    "checkpoint", None, "Checkpoint (default: latest in --model_dir)."
)
SPM = flags.DEFINE_string(
    "spm_model_file",
    None,
    "SentencePiece model (default: the one --model_dir carries, as a "
    "fetched or converted release does).",
)
VOCAB = flags.DEFINE_string(
    "vocab_file",
    None,
    "WordPiece vocab.txt (without --spm_model_file): the Chinese ALBERTs' "
    "tokenizer.",
)
EXPORT_DIR = flags.DEFINE_string("export_dir", None, "Output directory.")
SEQ = flags.DEFINE_integer(
    "seq_length",
    None,
    "Packed input length (default: the length the model was trained at, as "
    "its model directory records it, else 128).",
)
LOWER = flags.DEFINE_bool("do_lower_case", True, "Lower-case input text.")
TOP_K = flags.DEFINE_integer("top_k", 5, "Candidates per [MASK] in fill_mask.")
PRECISION = flags.DEFINE_enum(
    "precision",
    "float32",
    ["float32", "bfloat16"],
    "Compute dtype of the exported model: bfloat16 multiplies in bfloat16 "
    "(LayerNorm and softmax in float32) on the float32 weights; outputs stay "
    "float32.",
)
FORMAT = flags.DEFINE_enum(
    "format",
    "saved_model",
    ["saved_model", "onnx"],
    "saved_model: the three SavedModels; onnx: EXPORT_DIR/encoder.onnx, the "
    "token-id encoder for onnxruntime (no --spm_model_file needed).",
)
DYNAMIC = flags.DEFINE_bool(
    "dynamic_length",
    True,
    "The serving SavedModel pads each batch to its longest text (up to "
    "--seq_length); --nodynamic_length pads every batch to --seq_length.",
)
XLA = flags.DEFINE_bool(
    "xla",
    False,
    "Serving SavedModel: compile the fixed-length encoder with XLA, or run "
    "the fusions between the dynamic-length encoder's matrix products as "
    "XLA's (1.15x float32, 1.6x bfloat16 texts/s in embed). Needs XLA's CPU "
    "JIT where it is served: TF Serving only with "
    "--xla_cpu_compilation_enabled=true.",
)
QUANTIZE = flags.DEFINE_enum(
    "quantize",
    "none",
    ["none", "int8"],
    "--format=onnx: int8 writes the matrix products dynamically quantised "
    "to int8 (each shared weight once; needs onnxruntime).",
)
GIN_FILES = flags.DEFINE_multi_string(
    "gin_file", [], "Model gin files (default: model_dir/model_config.json)."
)
GIN_PARAMS = flags.DEFINE_multi_string("gin_param", [], "Extra gin bindings.")


def _tokenizer_files(model_dir_path: str):
  """(--spm_model_file, --vocab_file), else the tokenizer file MODEL_DIR
  carries; checked to be present."""
  spm, vocab = SPM.value, VOCAB.value
  if not spm and not vocab:
    spm, vocab = model_dir.tokenizer_files(model_dir_path)
  if tokenizers.choose(spm, vocab) == tokenizers.SENTENCEPIECE:
    flag, path, what = "--spm_model_file", spm, "SentencePiece model"
  else:
    flag, path, what = "--vocab_file", vocab, "WordPiece vocabulary"
  if not files.isfile(path):
    raise InputError(
        f"{flag}={path} does not exist: give the {what} the data was made with"
    )
  return spm, vocab


def main(argv: Sequence[str]) -> None:
  cli.unexpected_arguments(argv)
  onnx = FORMAT.value == "onnx"
  cli.require_flags(MODEL_DIR.name, EXPORT_DIR.name)
  onnx_export.check_quantize(QUANTIZE.value, onnx, "--format")
  model_dir_path = registry.resolve(MODEL_DIR.value)
  spm = vocab = None
  if not onnx:
    spm, vocab = _tokenizer_files(model_dir_path)
  if onnx and PRECISION.value != "float32":
    raise InputError(
        f"--precision={PRECISION.value} applies to SavedModels; the ONNX "
        "export is float32"
    )
  if files.exists(EXPORT_DIR.value):  # fail before the slow part
    raise InputError(
        f"export_dir {EXPORT_DIR.value} exists: choose a new one or remove it"
    )
  config = None
  if GIN_FILES.value or GIN_PARAMS.value:
    config = exporter.config_from_gin(GIN_FILES.value, GIN_PARAMS.value)
  pretrainer, _ = model_dir.load_pretrainer(
      model_dir_path,
      CHECKPOINT.value,
      config=config,
      precision=PRECISION.value,
  )
  if onnx:
    with atomic_write.atomic_directory(EXPORT_DIR.value) as tmp:
      onnx_export.write(
          pretrainer.encoder,
          os.path.join(tmp, "encoder.onnx"),
          embedding=model_dir.read_embedding(model_dir_path),
          quantize=QUANTIZE.value,
      )
    print(f"exported {EXPORT_DIR.value}/encoder.onnx")
    return
  exporter.export(
      pretrainer,
      spm_model_file=spm,
      vocab_file=vocab,
      export_dir=EXPORT_DIR.value,
      seq_length=SEQ.value
      or model_dir.recorded_seq_length(model_dir_path)
      or 128,
      do_lower_case=LOWER.value,
      top_k=TOP_K.value,
      embedding=model_dir.read_embedding(model_dir_path),
      dynamic_length=DYNAMIC.value,
      xla=XLA.value,
  )
  print(f"exported {EXPORT_DIR.value}/encoder, /preprocessing, /serving")


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
