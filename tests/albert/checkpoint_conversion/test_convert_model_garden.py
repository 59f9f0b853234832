"""TF Hub SavedModels (TF2 and TF1 Hub formats) and Model Garden checkpoints
-> model directories -> Model Garden checkpoints, against the outputs those
libraries computed.

The fixtures in tests/testdata/ were made by the other libraries' own code,
with the outputs they computed for the fixed inputs of
original_hub/inputs.npz: make_original_hub.py (the original's
`export_to_tfhub.py`, a TF1 Hub module and its TF1 checkpoint) and
make_model_garden.py (tf-models-official's TF1 converter, checkpoints of
`AlbertEncoder` and `BertPretrainerV2`, and its TF Hub export; and its
`AlbertEncoder` restoring the checkpoint our --to=model_garden wrote,
model_garden/ours/, with `assert_existing_objects_matched()`: ours.npz).
"""

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from tf_keras.protobuf import saved_metadata_pb2

from albert import model_dir as model_dir_lib
from albert import warm_start
from albert.checkpoint_conversion import original
from albert.checkpoint_conversion import model_garden
from albert.checkpoint_conversion.errors import ConversionError
from albert.modeling.classifier import AlbertClassifier
from albert.modeling.encoder import AlbertEncoder
from albert.modeling.pretrainer import AlbertPretrainer
from albert.serving import onnx_export
from official.optimization.optimizer_config import OptimizerConfig
from tests import helpers
from tests.albert.pretrainer_outputs import pretrainer_outputs

TESTDATA = os.path.join(helpers.REPO, "tests", "testdata")
ORIGINAL = os.path.join(TESTDATA, "original_hub")
GARDEN = os.path.join(TESTDATA, "model_garden")
CONFIG = os.path.join(ORIGINAL, "albert_config.json")
INPUTS = dict(np.load(os.path.join(ORIGINAL, "inputs.npz")))
TOLERANCE = 2e-5  # outputs are of order 1; float32 in other kernels


def _recorded(name):
  return dict(
      np.load(
          os.path.join(
              GARDEN if name != "original" else ORIGINAL, "outputs.npz"
          )
      )
  )


def _ours(model_dir):
  """Our model's outputs (and its encoder's per-layer outputs) on INPUTS."""
  pretrainer, config = model_dir_lib.load_pretrainer(model_dir)
  sequence, pooled, mlm, sop = pretrainer_outputs(
      pretrainer,
      INPUTS["input_ids"],
      INPUTS["input_mask"],
      INPUTS["segment_ids"],
      INPUTS["mlm_positions"],
  )
  layers = pretrainer.encoder(
      {
          "input_word_ids": tf.constant(INPUTS["input_ids"]),
          "input_mask": tf.constant(INPUTS["input_mask"]),
          "input_type_ids": tf.constant(INPUTS["segment_ids"]),
      }
  )["encoder_outputs"]
  return config, dict(
      sequence_output=sequence,
      pooled_output=pooled,
      mlm_logits=mlm,
      sop_log_probs=tf.nn.log_softmax(sop).numpy(),
      **{f"encoder_outputs_{i}": x.numpy() for i, x in enumerate(layers)},
  )


def _close(ours, theirs, keys, prefix):
  for key in keys:
    np.testing.assert_allclose(
        ours[key], theirs[f"{prefix}/{key}"], atol=TOLERANCE, err_msg=key
    )


def _weights(prefix):
  reader = tf.train.load_checkpoint(prefix)
  return {
      k: reader.get_tensor(k)
      for k in reader.get_variable_to_shape_map()
      if k.endswith("VARIABLE_VALUE") and not k.startswith("save_counter")
  }


@pytest.fixture(scope="module")
def from_original(tmp_path_factory):
  """The original TF1 checkpoint of the fixtures, through --from=original."""
  out = str(tmp_path_factory.mktemp("orig") / "model")
  original.from_original(
      checkpoint=os.path.join(ORIGINAL, "model.ckpt-best"),
      albert_config=None,
      output_dir=out,
  )
  return out


@pytest.mark.parametrize("source", ["hub_module", "checkpoint"])
def test_tf1_hub_module_and_checkpoint_give_the_original_outputs(
    tmp_path, source, from_original
):
  out = str(tmp_path / "model")
  if source == "checkpoint":  # model.ckpt-best, through --from=original
    out = from_original
  else:
    model_garden.from_tf_hub(
        checkpoint=os.path.join(ORIGINAL, "hub_module"),
        albert_config=None,  # the module's assets/albert_config.json
        output_dir=out,
    )
  config, ours = _ours(out)
  with open(CONFIG) as f:
    assert config.num_layers == json.load(f)["num_hidden_layers"] == 2
  theirs = _recorded("original")
  _close(ours, theirs, ("sequence_output", "pooled_output"), "tokens")
  _close(ours, theirs, ("sop_log_probs",), "sop")
  np.testing.assert_allclose(
      ours["mlm_logits"].reshape(theirs["mlm/mlm_logits"].shape),
      theirs["mlm/mlm_logits"],
      atol=TOLERANCE,
  )
  if source == "checkpoint":
    return
  # The SentencePiece model comes along.
  with open(os.path.join(out, "30k-clean.model"), "rb") as f:
    with open(
        os.path.join(ORIGINAL, "hub_module", "assets", "30k-clean.model"), "rb"
    ) as g:
      assert f.read() == g.read()


def test_tf2_hub_saved_model_gives_the_model_garden_outputs(tmp_path):
  # The architecture (layers, activation) comes from the SavedModel's Keras
  # metadata; no --albert_config.
  out = str(tmp_path / "model")
  model_garden.from_tf_hub(
      checkpoint=os.path.join(GARDEN, "tf_hub"),
      albert_config=None,
      output_dir=out,
  )
  config, ours = _ours(out)
  assert (config.num_layers, config.num_heads, config.hidden_act) == (
      2,
      3,
      "gelu",
  )
  theirs = _recorded("garden")
  keys = [
      "sequence_output",
      "pooled_output",
      "encoder_outputs_0",
      "encoder_outputs_1",
  ]
  _close(ours, theirs, keys, "tf_hub")
  _close(ours, theirs, ("mlm_logits",), "tf_hub_mlm")
  assert os.path.isfile(os.path.join(out, "30k-clean.model"))


@pytest.mark.parametrize(
    "layout", ["encoder", "pretrainer", "pretrainer_items", "unfactorized"]
)
def test_model_garden_checkpoints_in_every_layout(tmp_path, layout):
  config = CONFIG
  if layout == "unfactorized":  # E == H: no projection, layers renumbered
    with open(CONFIG) as f:
      data = json.load(f)
    data["embedding_size"] = data["hidden_size"]
    config = str(tmp_path / "albert_config.json")
    with open(config, "w") as f:
      json.dump(data, f)
  out = str(tmp_path / "model")
  model_garden.from_model_garden(
      checkpoint=os.path.join(GARDEN, layout),  # the directory's latest
      albert_config=config,
      output_dir=out,
  )
  _, ours = _ours(out)
  theirs = _recorded("garden")
  prefix = "unfactorized" if layout == "unfactorized" else "encoder"
  _close(ours, theirs, ("sequence_output", "pooled_output"), prefix)
  if layout.startswith("pretrainer"):
    _close(ours, theirs, ("mlm_logits",), "pretrainer")


def test_to_model_garden_writes_what_the_model_garden_restores(
    tmp_path, from_original
):
  out = str(tmp_path / "mg")
  written = model_garden.to_model_garden(
      checkpoint=from_original, output_dir=out
  )
  assert written == os.path.join(out, "ckpt-0")
  ours = _weights(written)
  # The same keys and values as the Model Garden's own conversion of the
  # same TF1 checkpoint, saved as its training saves (checkpoint_items) ...
  theirs = _weights(os.path.join(GARDEN, "pretrainer_items", "ckpt-1"))
  assert set(ours) == set(theirs)
  for key in ours:
    np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)
  # ... and as the checkpoint of ours the Model Garden's AlbertEncoder
  # restored with assert_existing_objects_matched(), giving its own outputs.
  assert set(_weights(os.path.join(GARDEN, "ours", "ckpt-0"))) == set(ours)
  restored = dict(np.load(os.path.join(GARDEN, "ours.npz")))
  recorded = _recorded("garden")
  for key, value in restored.items():
    np.testing.assert_array_equal(
        value, recorded[key.replace("ours", "encoder")]
    )
  # And back: the same weights as the model directory we started from.
  back = str(tmp_path / "back")
  model_garden.from_model_garden(
      checkpoint=written, albert_config=None, output_dir=back
  )
  a, _ = model_dir_lib.load_pretrainer(from_original)
  b, _ = model_dir_lib.load_pretrainer(back)
  for v, w in zip(
      a.encoder.weights + a.masked_lm.weights,
      b.encoder.weights + b.masked_lm.weights,
  ):
    np.testing.assert_array_equal(v.numpy(), w.numpy(), err_msg=v.name)


def _object_checkpoint(path, tensors):
  """An object-based checkpoint with these object paths."""
  root = tf.Module()
  for name, value in tensors.items():
    node = root
    for part in name.split("/")[:-1]:
      if part not in vars(node):
        setattr(node, part, tf.Module())
      node = vars(node)[part]
    setattr(node, name.split("/")[-1], tf.Variable(value))
  return tf.train.Checkpoint(encoder=root).write(str(path))


def test_bad_inputs_are_one_line_and_create_nothing(tmp_path, from_original):
  out = tmp_path / "out"
  block = "layer_with_weights-{}/_attention_layer/_query_dense/kernel"
  bert = _object_checkpoint(
      tmp_path / "bert",
      {block.format(i): np.zeros([12, 3, 4], np.float32) for i in (4, 5)},
  )
  with open(CONFIG) as f:
    wide = dict(json.load(f), hidden_size=24, num_attention_heads=4)
  wide_config = tmp_path / "wide.json"
  wide_config.write_text(json.dumps(wide))
  cases = [
      (
          lambda: model_garden.from_tf_hub(
              checkpoint=str(tmp_path), albert_config=None, output_dir=out
          ),
          "has no saved_model.pb",
      ),
      (
          lambda: model_garden.from_model_garden(
              checkpoint=bert, albert_config=CONFIG, output_dir=out
          ),
          "an attention block found 2 times",
      ),
      (
          lambda: model_garden.from_model_garden(
              checkpoint=os.path.join(ORIGINAL, "model.ckpt-best"),
              albert_config=CONFIG,
              output_dir=out,
          ),
          "convert it with --from=original",
      ),
      (
          lambda: model_garden.from_model_garden(
              checkpoint=os.path.join(GARDEN, "encoder"),
              albert_config=str(wide_config),
              output_dir=out,
          ),
          "has shape [8, 12] but the config needs [8, 24]",
      ),
      (
          lambda: model_garden.from_tf_hub(
              checkpoint=os.path.join(GARDEN, "tf_hub"),
              albert_config=str(wide_config),
              output_dir=out,
          ),
          "has shape",
      ),
  ]
  # A BERT of the Model Garden (its Keras metadata names a BertEncoder).
  bert_hub = tmp_path / "bert_hub"
  shutil.copytree(os.path.join(GARDEN, "tf_hub"), bert_hub)
  metadata = saved_metadata_pb2.SavedMetadata()
  metadata.ParseFromString((bert_hub / "keras_metadata.pb").read_bytes())
  for node in metadata.nodes:
    node.metadata = node.metadata.replace("AlbertEncoder", "BertEncoder")
  (bert_hub / "keras_metadata.pb").write_bytes(metadata.SerializeToString())
  cases.append(
      (
          lambda: model_garden.from_tf_hub(
              checkpoint=str(bert_hub), albert_config=None, output_dir=out
          ),
          "its encoder is Text>BertEncoder, not an AlbertEncoder",
      )
  )
  for call, expected in cases:
    with pytest.raises(ConversionError) as raised:
      call()
    message = str(raised.value)
    assert expected in message and "\n" not in message, message
    assert not out.exists()
  # A model the Model Garden cannot hold: unshared blocks.
  unshared = str(tmp_path / "unshared")
  config = model_dir_lib.read_model_config(from_original).replace(
      sharing="none"
  )
  model = AlbertPretrainer.from_config_object(config)
  model(model.dummy_inputs())
  model_dir_lib.write_model_dir(unshared, model)
  with pytest.raises(ConversionError, match="one shared block"):
    model_garden.to_model_garden(checkpoint=unshared, output_dir=str(out))
  assert not out.exists()


def test_imported_model_warm_starts_pretraining_and_fine_tuning_and_exports(
    tmp_path,
):
  # What --from=tf_hub writes is a model directory like any other: the
  # warm-start path of continued pretraining (PretrainTask.init_checkpoint)
  # and of fine-tuning (--init_checkpoint) read it, and it exports.
  out = str(tmp_path / "model")
  model_garden.from_tf_hub(
      checkpoint=os.path.join(GARDEN, "tf_hub"),
      albert_config=None,
      output_dir=out,
  )
  source, config = model_dir_lib.load_pretrainer(out)
  target = AlbertPretrainer.from_config_object(config)
  target(target.dummy_inputs())
  optimizer = OptimizerConfig(name="lamb").build()
  optimizer.build(target.trainable_variables)
  warm_start.init_pretrainer(target, optimizer, out, False)
  classifier = AlbertClassifier(
      AlbertEncoder.from_config_object(config), num_classes=2
  )
  classifier(classifier.dummy_inputs())
  warm_start.load_encoder_weights(classifier.encoder, out, config)
  for model in (target, classifier):
    for ours, theirs in zip(model.encoder.weights, source.encoder.weights):
      np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
  proto = onnx_export.build(source.encoder)
  assert {o.name for o in proto.graph.output} == {
      "sequence_output",
      "pooled_output",
  }
