"""Writes the encoder, preprocessing and serving SavedModels of a model.

`python -m albert.run_export` is the command-line front of this module.
"""

import os
from typing import Sequence

from absl import logging
import tensorflow as tf
import tensorflow_text  # noqa: F401 (registers the ops)

from albert import configs
from albert.modeling.config import AlbertConfig
from albert.serving.hub_encoder_module import HubEncoderModule
from albert.serving.hub_preprocessing_module import HubPreprocessingModule
from albert.serving.preprocessor import AlbertPreprocessor
from albert.modeling.pretrainer import AlbertPretrainer
from albert.serving.text_serving_module import TextServingModule
from official.io import atomic_write


def config_from_gin(
    gin_file: Sequence[str] = (), gin_param: Sequence[str] = ()
) -> AlbertConfig:
  """The model config from gin files and bindings (not model_config.json)."""
  configs.parse(gin_file, gin_param)
  return AlbertConfig()


def export(
    pretrainer: AlbertPretrainer,
    *,
    spm_model_file: str,
    export_dir: str,
    seq_length: int = 128,
    do_lower_case: bool = True,
    top_k: int = 5,
) -> None:
  """Writes the three SavedModels into `export_dir` (atomically)."""
  if os.path.exists(export_dir):
    raise ValueError(
        f"export_dir {export_dir} exists: choose a new one or remove it"
    )
  if not os.path.isfile(spm_model_file):
    raise ValueError(f"SentencePiece model {spm_model_file} not found")
  if seq_length > pretrainer.encoder.config.max_position_embeddings:
    raise ValueError(
        f"seq_length={seq_length} exceeds max_position_embeddings"
        f"={pretrainer.encoder.config.max_position_embeddings}"
    )
  preprocessor = AlbertPreprocessor(spm_model_file, seq_length, do_lower_case)
  vocab = preprocessor.vocab_size
  if vocab != pretrainer.encoder.config.vocab_size:
    raise ValueError(
        f"{spm_model_file} has {vocab} pieces but the model's "
        f"vocab_size is {pretrainer.encoder.config.vocab_size}"
    )
  with atomic_write.atomic_directory(export_dir) as tmp:
    modules = {
        "encoder": HubEncoderModule(pretrainer, spm_model_file, do_lower_case),
        "preprocessing": HubPreprocessingModule(preprocessor),
        "serving": TextServingModule(pretrainer, preprocessor, top_k=top_k),
    }
    for name, module in modules.items():
      tf.saved_model.save(
          module, os.path.join(tmp, name), signatures=module.signatures()
      )
      logging.info("Wrote the %s SavedModel", name)
