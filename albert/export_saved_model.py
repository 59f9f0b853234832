r"""Exports a trained ALBERT as SavedModels for serving.

  python -m albert.export_saved_model --model_dir=runs/base \
      --spm_model_file=spm.model --export_dir=exported [--seq_length=128]

Writes, atomically (a temporary directory renamed when complete):
  EXPORT_DIR/encoder        hub-style encoder: serving_default and mlm signatures
  EXPORT_DIR/preprocessing  raw strings -> encoder inputs (SentencePiece asset)
  EXPORT_DIR/serving        raw text end to end: serving_default, fill_mask,
                            sentence_order
Each loads with `tf.saved_model.load` in a process that imports only
tensorflow and tensorflow_text.
"""

import json
import os
import shutil
import sys
from typing import Optional, Sequence

from absl import app
from absl import flags
from absl import logging
import tensorflow as tf
import tensorflow_text  # pylint: disable=unused-import  (registers the ops)

from albert.config import AlbertConfig
from albert.encoder import AlbertEncoder
from albert.encoder_module import EncoderModule
from albert.preprocessor import AlbertPreprocessor
from albert.pretrainer import AlbertPretrainer
from albert.serving_module import ServingModule
from official.config import gin_files

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODEL_DIR = flags.DEFINE_string("model_dir", None, "Model directory to export.")
CHECKPOINT = flags.DEFINE_string("checkpoint", None,
                                 "Checkpoint (default: latest in --model_dir).")
SPM = flags.DEFINE_string("spm_model_file", None, "SentencePiece model.")
EXPORT_DIR = flags.DEFINE_string("export_dir", None, "Output directory.")
SEQ = flags.DEFINE_integer("seq_length", 128, "Packed input length.")
LOWER = flags.DEFINE_bool("do_lower_case", True, "Lower-case input text.")
TOP_K = flags.DEFINE_integer("top_k", 5, "Candidates per [MASK] in fill_mask.")
GIN_FILES = flags.DEFINE_multi_string(
    "gin_file", [], "Model gin files (default: model_dir/model_config.json).")
GIN_PARAMS = flags.DEFINE_multi_string("gin_param", [], "Extra gin bindings.")


def model_config(model_dir: str, gin_file: Sequence[str] = (),
                 gin_param: Sequence[str] = ()) -> AlbertConfig:
  """The model's config: from gin when given, else model_dir/model_config.json."""
  if gin_file or gin_param:
    gin_files.parse_gin(gin_file, gin_param, search_paths=[REPO_ROOT])
    return AlbertConfig()
  path = os.path.join(model_dir, "model_config.json")
  if not os.path.exists(path):
    raise ValueError(f"{path} not found: pass --gin_file for the model size")
  with open(path, encoding="utf-8") as f:
    return AlbertConfig(**json.load(f))


def restore_pretrainer(config: AlbertConfig, model_dir: str,
                       checkpoint: Optional[str] = None) -> AlbertPretrainer:
  """Builds the pretrainer and restores its weights (optimizer state ignored)."""
  checkpoint = checkpoint or tf.train.latest_checkpoint(model_dir)
  if not checkpoint:
    raise ValueError(f"no checkpoint in {model_dir}: pass --checkpoint")
  pretrainer = AlbertPretrainer(AlbertEncoder.from_config_object(config))
  pretrainer(pretrainer.dummy_inputs())
  status = tf.train.Checkpoint(model=pretrainer).read(checkpoint)
  try:
    status.expect_partial().assert_existing_objects_matched()
  except AssertionError as e:
    raise ValueError(f"checkpoint {checkpoint} does not match the model "
                     f"config: {str(e).splitlines()[0]}") from e
  logging.info("Restored %s", checkpoint)
  return pretrainer


def export(pretrainer: AlbertPretrainer, *, spm_model_file: str,
           export_dir: str, seq_length: int = 128, do_lower_case: bool = True,
           top_k: int = 5) -> None:
  """Writes the three SavedModels into `export_dir` (atomically)."""
  if os.path.exists(export_dir):
    raise ValueError(f"export_dir {export_dir} exists: choose a new one or "
                     "remove it")
  if not os.path.isfile(spm_model_file):
    raise ValueError(f"SentencePiece model {spm_model_file} not found")
  if seq_length > pretrainer.encoder.config.max_position_embeddings:
    raise ValueError(f"seq_length={seq_length} exceeds max_position_embeddings"
                     f"={pretrainer.encoder.config.max_position_embeddings}")
  preprocessor = AlbertPreprocessor(spm_model_file, seq_length, do_lower_case)
  vocab = int(preprocessor.tokenizer.vocab_size())
  if vocab != pretrainer.encoder.config.vocab_size:
    raise ValueError(f"{spm_model_file} has {vocab} pieces but the model's "
                     f"vocab_size is {pretrainer.encoder.config.vocab_size}")
  tmp = f"{export_dir.rstrip('/')}.tmp-{os.getpid()}"
  shutil.rmtree(tmp, ignore_errors=True)
  try:
    modules = {
        "encoder": EncoderModule(pretrainer),
        "preprocessing": preprocessor,
        "serving": ServingModule(pretrainer, preprocessor, top_k=top_k),
    }
    for name, module in modules.items():
      tf.saved_model.save(module, os.path.join(tmp, name),
                          signatures=module.signatures())
      logging.info("Wrote the %s SavedModel", name)
    os.replace(tmp, export_dir)
  finally:
    shutil.rmtree(tmp, ignore_errors=True)


def main(argv: Sequence[str]) -> None:
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
  for flag in (MODEL_DIR, SPM, EXPORT_DIR):
    if not flag.value:
      sys.exit(f"export_saved_model: --{flag.name} is required")
  try:
    if os.path.exists(EXPORT_DIR.value):  # fail before the slow part
      raise ValueError(f"export_dir {EXPORT_DIR.value} exists: choose a new "
                       "one or remove it")
    config = model_config(MODEL_DIR.value, GIN_FILES.value, GIN_PARAMS.value)
    pretrainer = restore_pretrainer(config, MODEL_DIR.value, CHECKPOINT.value)
    export(pretrainer, spm_model_file=SPM.value, export_dir=EXPORT_DIR.value,
           seq_length=SEQ.value, do_lower_case=LOWER.value, top_k=TOP_K.value)
  except (ValueError, tf.errors.OpError) as e:
    sys.exit(f"export_saved_model: {str(e).strip().splitlines()[0]}")
  print(f"exported {EXPORT_DIR.value}/encoder, /preprocessing, /serving")


if __name__ == "__main__":
  app.run(main)
