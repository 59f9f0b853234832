"""keras-hub presets -> model directories -> keras-hub presets, against the
files and outputs of keras-hub's own code.

The fixtures in tests/testdata/keras_hub/ were made by
tests/testdata/make_keras_hub.py in a side environment with keras-hub: an
`AlbertBackbone` preset (two groups of two inner layers) with its tokenizer,
an `AlbertTextClassifier` preset, the outputs keras-hub computed for the
inputs of original_hub/inputs.npz, and (ours.npz) the outputs keras-hub
computed loading the presets our --to=keras_hub wrote and the directory our
--to=huggingface wrote (kept as keras_hub/ours_hf).
"""

import json
import os
import re
import stat

import h5py
import numpy as np
import pytest
import safetensors.numpy
import tensorflow as tf

from albert.finetuning import training as finetuning
from albert import model_dir as model_dir_lib
from albert.checkpoint_conversion import huggingface
from albert.checkpoint_conversion import keras_hub
from albert.checkpoint_conversion.errors import ConversionError
from tests import helpers

TESTDATA = os.path.join(helpers.REPO, "tests", "testdata")
KERAS_HUB = os.path.join(TESTDATA, "keras_hub")
BACKBONE = os.path.join(KERAS_HUB, "backbone")
CLASSIFIER = os.path.join(KERAS_HUB, "classifier")
SPM = os.path.join(
    TESTDATA, "original_hub", "hub_module", "assets", "30k-clean.model"
)
INPUTS = dict(np.load(os.path.join(TESTDATA, "original_hub", "inputs.npz")))
RECORDED = dict(np.load(os.path.join(KERAS_HUB, "outputs.npz")))
TOLERANCE = 2e-5
# The fixture's architecture, for the fine-tuning recipe.
RECIPE = [
    "AlbertConfig.vocab_size = 40",
    "AlbertConfig.embedding_size = 8",
    "AlbertConfig.hidden_size = 12",
    "AlbertConfig.num_layers = 4",
    "AlbertConfig.num_heads = 3",
    "AlbertConfig.intermediate_size = 20",
    "AlbertConfig.num_hidden_groups = 2",
    "AlbertConfig.inner_group_num = 2",
    "AlbertConfig.max_position_embeddings = 16",
    "GlueTask.seq_length = 12",
]


def _features():
  return {
      "input_word_ids": tf.constant(INPUTS["input_ids"]),
      "input_mask": tf.constant(INPUTS["input_mask"]),
      "input_type_ids": tf.constant(INPUTS["segment_ids"]),
  }


def _h5(path):
  """Every group (with its layer name) and dataset of a weights file. Keras
  numbers the default names of unnamed layers per process (`softmax_3`):
  the number is left out."""
  groups, datasets = {}, {}

  def visit(name, obj):
    if isinstance(obj, h5py.Dataset):
      datasets[name] = np.asarray(obj)
    else:
      groups[name] = re.sub(r"_\d+$", "", str(obj.attrs.get("name", "")))

  with h5py.File(path, "r") as f:
    f.visititems(visit)
  return groups, datasets


def _same_files(ours, theirs, names, skip_groups=()):
  for name in names:
    a, b = os.path.join(ours, name), os.path.join(theirs, name)
    if name.endswith(".h5"):
      (ga, da), (gb, db) = _h5(a), _h5(b)
      gb = {k: v for k, v in gb.items() if not k.startswith(skip_groups)}
      db = {k: v for k, v in db.items() if not k.startswith(skip_groups)}
      assert ga == gb, name
      assert set(da) == set(db), name
      for key in da:
        np.testing.assert_array_equal(da[key], db[key], err_msg=key)
    elif name.endswith(".json"):
      with open(a) as f, open(b) as g:
        assert json.load(f) == json.load(g), name
    else:
      with open(a, "rb") as f, open(b, "rb") as g:
        assert f.read() == g.read(), name


@pytest.fixture(scope="module")
def backbone_dir(tmp_path_factory):
  out = str(tmp_path_factory.mktemp("kh") / "backbone")
  keras_hub.from_keras_hub(checkpoint=BACKBONE, output_dir=out)
  return out


def test_backbone_preset_gives_the_keras_hub_outputs(backbone_dir):
  pretrainer, config = model_dir_lib.load_pretrainer(backbone_dir)
  assert (config.num_hidden_groups, config.inner_group_num) == (2, 2)
  out = pretrainer.encoder(_features())
  for key in ("sequence_output", "pooled_output"):
    np.testing.assert_allclose(
        out[key].numpy(), RECORDED[f"keras_hub/{key}"], atol=TOLERANCE
    )
  with open(os.path.join(backbone_dir, "vocabulary.spm"), "rb") as f:
    assert f.read() == open(SPM, "rb").read()


def test_to_keras_hub_writes_the_files_keras_hub_writes(backbone_dir, tmp_path):
  out = str(tmp_path / "preset")
  keras_hub.to_keras_hub(
      checkpoint=backbone_dir, output_dir=out, spm_model_file=SPM
  )
  _same_files(
      out,
      BACKBONE,
      [
          "config.json",
          "model.weights.h5",
          "tokenizer.json",
          "assets/tokenizer/vocabulary.spm",
      ],
  )
  with (
      open(os.path.join(out, "metadata.json")) as f,
      open(os.path.join(BACKBONE, "metadata.json")) as g,
  ):
    ours, theirs = json.load(f), json.load(g)
  for key in ("parameter_count", "keras_version", "keras_hub_version"):
    assert ours[key] == theirs[key], key
  # keras-hub loaded what we wrote and computed its own outputs.
  ours = dict(np.load(os.path.join(KERAS_HUB, "ours.npz")))
  for key in ("sequence_output", "pooled_output", "logits"):
    np.testing.assert_array_equal(
        ours[f"ours/{key}"], RECORDED[f"keras_hub/{key}"]
    )
  np.testing.assert_array_equal(
      ours["ours/tokenizer_ids"], RECORDED["tokenizer/ids"]
  )


def test_to_huggingface_is_what_keras_hub_loaded(backbone_dir, tmp_path):
  out = str(tmp_path / "hf")
  huggingface.to_huggingface(checkpoint=backbone_dir, output_dir=out)
  kept = os.path.join(KERAS_HUB, "ours_hf")
  _same_files(out, kept, ["config.json"])
  # The encoder's tensors (the pretraining heads are fresh: a backbone
  # preset has none, and keras-hub's backbone does not read them).
  written, loaded = (
      safetensors.numpy.load_file(os.path.join(d, "model.safetensors"))
      for d in (out, kept)
  )
  assert set(written) == set(loaded)
  for key in written:
    if key.startswith("albert."):
      np.testing.assert_array_equal(written[key], loaded[key], err_msg=key)
  umask = os.umask(0)
  os.umask(umask)
  mode = stat.S_IMODE(os.stat(os.path.join(out, "model.safetensors")).st_mode)
  assert mode == 0o666 & ~umask
  ours = dict(np.load(os.path.join(KERAS_HUB, "ours.npz")))
  for key in ("sequence_output", "pooled_output"):
    np.testing.assert_array_equal(
        ours[f"ours_hf/{key}"], RECORDED[f"keras_hub/{key}"]
    )


def test_classifier_preset_both_ways(tmp_path):
  task = finetuning.build_task(
      gin_file=["gin/finetune/mnli.gin"], gin_param=RECIPE
  )
  model = task.build_model()
  model(model.dummy_inputs())
  keras_hub.finetuned_from_keras_hub(model, checkpoint=CLASSIFIER)
  logits = model(_features())["logits"].numpy()
  np.testing.assert_allclose(
      logits, RECORDED["keras_hub/logits"], atol=TOLERANCE
  )
  out = str(tmp_path / "classifier")
  keras_hub.finetuned_to_keras_hub(
      model,
      task.config,
      source="mnli",
      output_dir=out,
      seq_length=12,
      spm_model_file=SPM,
  )
  _same_files(
      out,
      CLASSIFIER,
      [
          "config.json",
          "model.weights.h5",
          "task.json",
          "task.weights.h5",
          "preprocessor.json",
          "tokenizer.json",
          "assets/tokenizer/vocabulary.spm",
      ],
      skip_groups=("optimizer",),  # keras-hub compiles its own
  )


def test_bad_presets_are_one_line(backbone_dir, tmp_path):
  out = tmp_path / "out"
  bert = tmp_path / "bert"
  bert.mkdir()
  (bert / "config.json").write_text(
      json.dumps({"class_name": "BertBackbone", "config": {}})
  )
  other = tmp_path / "other_shape"
  other.mkdir()
  with open(os.path.join(BACKBONE, "config.json")) as f:
    data = json.load(f)
  data["config"]["hidden_dim"] = 24
  (other / "config.json").write_text(json.dumps(data))
  os.symlink(
      os.path.join(BACKBONE, "model.weights.h5"), other / "model.weights.h5"
  )
  for checkpoint, expected in (
      (tmp_path / "none", "config.json not found"),
      (bert, "class_name='BertBackbone', not AlbertBackbone"),
      (other, "has shape [8, 12] but the config needs [8, 24]"),
  ):
    with pytest.raises(ConversionError) as raised:
      keras_hub.from_keras_hub(checkpoint=str(checkpoint), output_dir=str(out))
    assert expected in str(raised.value), str(raised.value)
    assert "\n" not in str(raised.value)
    assert not out.exists()
  with pytest.raises(ConversionError, match="--spm_model_file=nope.model"):
    keras_hub.to_keras_hub(
        checkpoint=backbone_dir,
        output_dir=str(out),
        spm_model_file="nope.model",
    )
  assert not out.exists()
