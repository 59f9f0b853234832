"""`albert.model_dir`: writing a model directory and loading it back
(`albert.warm_start`: its encoder into a fine-tuning model)."""

import json
import os

import gin
import numpy as np
import pytest
import tensorflow as tf

from albert import model_dir as model_dir_lib
from albert import warm_start
from albert.finetuning.own_data.text_classification import (
    TextClassificationTask,
)
from albert.modeling.classifier import AlbertClassifier
from albert.modeling.weight_names import pretrainer_weights
from albert.modeling.config import AlbertConfig
from albert.modeling.pretrainer import AlbertPretrainer
from official.core import model_config_file
from official.errors import InputError
from tests import helpers

# Every field away from its default, so a lost field shows.
CONFIG = helpers.tiny_config(
    vocab_size=30,
    embedding_size=4,
    hidden_size=8,
    num_layers=3,
    intermediate_size=16,
    max_position_embeddings=8,
    num_hidden_groups=2,
    inner_group_num=2,
    hidden_act="gelu_exact",
    layer_norm_epsilon=1e-6,
    dropout_rate=0.1,
)


def _random_pretrainer(seed):
  tf.random.set_seed(seed)
  return AlbertPretrainer.from_config_object(CONFIG)


def test_load_pretrainer_restores_the_weights_it_wrote(tmp_path):
  first = _random_pretrainer(1)
  second = _random_pretrainer(2)
  folder = str(tmp_path / "m")
  assert model_dir_lib.write_model_dir(folder, first, step=3) == os.path.join(
      folder, "ckpt-3"
  )
  model_dir_lib.write_model_dir(folder, second, step=8)
  for checkpoint, want in (
      (None, second),
      (os.path.join(folder, "ckpt-3"), first),
  ):
    loaded, config = model_dir_lib.load_pretrainer(folder, checkpoint)
    assert config == CONFIG
    for name, variable in pretrainer_weights(loaded).items():
      np.testing.assert_array_equal(
          variable.numpy(), pretrainer_weights(want)[name].numpy(), err_msg=name
      )


def test_config_files_agree_with_the_trainer_and_gin(tmp_path):
  folder = str(tmp_path / "m")
  model_dir_lib.write_model_dir(folder, _random_pretrainer(1))
  with open(os.path.join(folder, model_config_file.FILE_NAME)) as f:
    text = f.read()
  # What official/core/trainer.py writes for the same config.
  assert text == json.dumps(CONFIG.to_dict(), indent=2, sort_keys=True)
  assert model_dir_lib.read_model_config(folder) == CONFIG
  gin.clear_config()
  try:
    gin.parse_config_file(os.path.join(folder, "operative_config.gin"))
    assert AlbertConfig() == CONFIG
  finally:
    gin.clear_config()
  assert (
      AlbertConfig.from_json_file(os.path.join(folder, "albert_config.json"))
      == CONFIG
  )


def test_errors_name_the_file(tmp_path):
  with pytest.raises(ValueError, match="model_config.json not found"):
    model_dir_lib.load_pretrainer(str(tmp_path))
  folder = str(tmp_path / "m")
  model_dir_lib.write_model_dir(folder, _random_pretrainer(1))
  with pytest.raises(ValueError, match="ckpt-9 not found"):
    model_dir_lib.load_pretrainer(folder, os.path.join(folder, "ckpt-9"))
  # A model_config.json that does not describe the checkpoint's model.
  with open(os.path.join(folder, "model_config.json"), "w") as f:
    json.dump(CONFIG.replace(hidden_size=12, num_heads=3).to_dict(), f)
  with pytest.raises(ValueError, match="does not hold every weight") as info:
    model_dir_lib.load_pretrainer(folder)
  assert "\n" not in str(info.value)
  with open(os.path.join(folder, "model_config.json"), "w") as f:
    json.dump({**CONFIG.to_dict(), "num_hidden_layers": 3}, f)
  with pytest.raises(
      ValueError,
      match=r"unknown AlbertConfig fields \['num_hidden_layers'\]",
  ):
    model_dir_lib.load_pretrainer(folder)


def test_load_encoder_weights_restores_the_encoder_only(tmp_path):
  source = _random_pretrainer(1)
  folder = str(tmp_path / "m")
  model_dir_lib.write_model_dir(folder, source, step=4)
  tf.random.set_seed(7)
  classifier = AlbertClassifier.from_config_object(CONFIG, num_classes=3)
  head_before = [w.numpy() for w in classifier.classifier.weights]
  path = warm_start.load_encoder_weights(classifier.encoder, folder, CONFIG)
  assert path == os.path.join(folder, "ckpt-4")
  want, got = source.encoder.weights, classifier.encoder.weights
  assert len(want) == len(got) > 10
  for w, g in zip(want, got):  # the same construction order
    np.testing.assert_array_equal(g.numpy(), w.numpy(), err_msg=w.name)
  for before, after in zip(head_before, classifier.classifier.weights):
    np.testing.assert_array_equal(before, after.numpy())


def test_load_encoder_weights_names_config_and_shape_mismatches(tmp_path):
  folder = str(tmp_path / "m")
  model_dir_lib.write_model_dir(folder, _random_pretrainer(1))
  other = CONFIG.replace(hidden_size=12, num_heads=3)
  encoder = AlbertPretrainer.from_config_object(other).encoder
  with pytest.raises(
      ValueError,
      match=r"another model \(checkpoint -> config: "
      r"hidden_size: 8 -> 12, num_heads",
  ):
    warm_start.load_encoder_weights(encoder, folder, other)
  # Without model_config.json the restore itself names the tensor's shapes.
  os.remove(os.path.join(folder, model_config_file.FILE_NAME))
  with pytest.raises(ValueError, match="does not fit the encoder"):
    warm_start.load_encoder_weights(encoder, folder, other)


def test_extend_rows_copies_or_interpolates_the_learnt_rows():
  table = np.arange(12, dtype=np.float32).reshape(4, 3)  # rows 0..3
  copied = warm_start.extend_rows(table, 10, "copy")
  np.testing.assert_array_equal(copied[:4], table)
  np.testing.assert_array_equal(copied[[4, 7, 9]], table[[0, 3, 1]])
  resampled = warm_start.extend_rows(table, 7, "interpolate")
  # Row i is the table at i * 3 / 6: rows 0, 0.5, 1, ..., 3.
  want = [table[0] + (table[1] - table[0]) * k / 2 for k in range(7)]
  np.testing.assert_allclose(resampled, want)
  with pytest.raises(ValueError, match="cannot extend a table of 4 rows"):
    warm_start.extend_rows(table, 3, "copy")
  with pytest.raises(InputError, match="PositionTable.extend='tile'"):
    warm_start.PositionTable(extend="tile")


@pytest.mark.parametrize("method", warm_start.EXTEND_METHODS)
def test_a_longer_position_table_starts_from_the_learnt_rows(tmp_path, method):
  # Fine-tuning (the encoder) and continued pretraining (every weight) of
  # a model with 12 positions from a checkpoint with 8.
  source = _random_pretrainer(1)
  folder = str(tmp_path / "m")
  model_dir_lib.write_model_dir(folder, source, step=4)
  longer = CONFIG.replace(max_position_embeddings=12)
  learnt = source.encoder.embeddings.position_embeddings.numpy()
  want = warm_start.extend_rows(learnt, 12, method)
  gin.clear_config()
  gin.bind_parameter("PositionTable.extend", method)
  try:
    classifier = AlbertClassifier.from_config_object(longer, num_classes=2)
    warm_start.load_encoder_weights(classifier.encoder, folder, longer)
    pretrainer = AlbertPretrainer.from_config_object(longer)
    warm_start.init_pretrainer(pretrainer, None, folder)
  finally:
    gin.clear_config()
  for model in (classifier, pretrainer):
    table = model.encoder.embeddings.position_embeddings.numpy()
    np.testing.assert_array_equal(table, want)
    np.testing.assert_array_equal(table[0], learnt[0])
    if method == "copy":
      np.testing.assert_array_equal(table[:8], learnt)
    for got, was in zip(
        model.encoder.embeddings.word_embeddings.numpy(),
        source.encoder.embeddings.word_embeddings.numpy(),
    ):
      np.testing.assert_array_equal(got, was)
  # A fine-tuning task on the model directory takes its recorded config,
  # with the fields gin binds replaced.
  gin.bind_parameter("AlbertConfig.max_position_embeddings", 12)
  try:
    task = TextClassificationTask(init_checkpoint=folder, seq_length=8)
    assert task.config == longer
  finally:
    gin.clear_config()
  task = TextClassificationTask(init_checkpoint=folder, seq_length=8)
  assert task.config == CONFIG
  # A shorter table than the checkpoint's is still refused.
  shorter = CONFIG.replace(max_position_embeddings=6)
  with pytest.raises(ValueError, match="max_position_embeddings: 8 -> 6"):
    warm_start.load_encoder_weights(
        AlbertPretrainer.from_config_object(shorter).encoder, folder, shorter
    )


def test_what_a_model_directory_records_for_later_commands(tmp_path):
  assert model_dir_lib.tokenizer_files(str(tmp_path)) == (None, None)
  assert model_dir_lib.recorded_seq_length(str(tmp_path)) is None
  (tmp_path / "vocab_chinese.txt").write_text("[PAD]\n")
  vocab = str(tmp_path / "vocab_chinese.txt")
  assert model_dir_lib.tokenizer_files(str(tmp_path)) == (None, vocab)
  (tmp_path / "30k-clean.model").write_bytes(b"spm")
  spm = str(tmp_path / "30k-clean.model")
  assert model_dir_lib.tokenizer_files(str(tmp_path)) == (spm, None)
  (tmp_path / "other.model").write_bytes(b"spm")  # which one: the flags say
  assert model_dir_lib.tokenizer_files(str(tmp_path)) == (None, None)
  (tmp_path / model_dir_lib.GIN_FILE).write_text(
      "AlbertConfig.hidden_size = 16\nPretrainTask.seq_length = 64\n"
      "TrainerConfig.seq_length_unrelated = 3\n"
  )
  assert model_dir_lib.recorded_seq_length(str(tmp_path)) == 64
