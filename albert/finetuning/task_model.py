"""The model side of a fine-tuning task: its encoder's config, the warm
start from `init_checkpoint`, and a frozen encoder."""

import os
from typing import Optional

from absl import logging
import gin
import numpy as np

from albert import model_dir as model_dir_lib
from albert import warm_start as warm_start_lib
from albert.modeling.config import AlbertConfig
from official.core import model_config_file
from official.errors import InputError
from official.io import files


def encoder_config(described_by: Optional[str]) -> AlbertConfig:
  """`AlbertConfig()` as gin binds it when a size file binds `hidden_size`
  (no path is touched: a run refuses what its strategy cannot reach
  first); otherwise the config `described_by`'s model directory records,
  with the fields gin binds (e.g. a longer `max_position_embeddings`)
  replaced, or `AlbertConfig()` when there is no record."""
  bound = gin.get_bindings(AlbertConfig)
  if described_by and "hidden_size" not in bound:
    model_dir = model_dir_lib.split_checkpoint(described_by)[0]
    if files.exists(os.path.join(model_dir, model_config_file.FILE_NAME)):
      logging.info("No size gin file: the encoder %s records", model_dir)
      return model_dir_lib.read_model_config(model_dir).replace(**bound)
  return AlbertConfig()


def warm_start(model, init_checkpoint: Optional[str], config) -> Optional[str]:
  """`model`'s encoder from `init_checkpoint` (the heads start fresh); the
  checkpoint read, or None without one (a random encoder, with a warning)."""
  if not init_checkpoint:
    logging.warning(
        "No --init_checkpoint: fine-tuning a randomly initialised encoder."
    )
    return None
  path = warm_start_lib.load_encoder_weights(
      model.encoder, init_checkpoint, config
  )
  logging.info("Encoder restored from %s; the head starts fresh.", path)
  return path


def freeze_encoder(model, task: str) -> None:
  """Leaves `model`'s heads alone trainable: the encoder keeps the weights
  `init_checkpoint` gave it (no gradients, no optimizer slots) and runs
  without dropout (`EncoderWithHeads.encoder_training`), so the heads learn
  from fixed features. Refuses a model with nothing else to train."""
  model.encoder.trainable = False
  if not model.trainable_variables:
    raise InputError(
        f"{task}.freeze_encoder: {type(model).__name__} has no weights "
        "outside the encoder to train; drop --freeze_encoder"
    )
  logging.info(
      "Encoder frozen: training the head's %d weights only.",
      sum(int(np.prod(v.shape)) for v in model.trainable_variables),
  )
