"""Shared by the serving tests: a tiny pretrained model directory."""

import json

import pytest
import tensorflow as tf

from albert.modeling.encoder import AlbertEncoder
from albert.modeling.pretrainer import AlbertPretrainer
from tests import helpers


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, spm_model):
  root = tmp_path_factory.mktemp("export_model")
  config = helpers.tiny_config(
      vocab_size=2000,
      embedding_size=16,
      hidden_size=32,
      num_heads=4,
      intermediate_size=64,
      max_position_embeddings=64,
  )
  tf.random.set_seed(3)
  pretrainer = AlbertPretrainer(AlbertEncoder.from_config_object(config))
  pretrainer(pretrainer.dummy_inputs())
  tf.train.Checkpoint(model=pretrainer).write(str(root / "ckpt-1"))
  (root / "model_config.json").write_text(json.dumps(config.to_dict()))
  return root, pretrainer
