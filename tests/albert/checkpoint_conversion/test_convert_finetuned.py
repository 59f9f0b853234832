"""Fine-tuned heads across formats: original TF1 names both ways for every
head kind, transformers' classes both ways (outputs within 1e-4), and the
command line with a task recipe."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from albert.checkpoint_conversion import original
from albert.checkpoint_conversion import huggingface
from albert.checkpoint_conversion import model_io
from albert.checkpoint_conversion import errors
from albert.checkpoint_conversion import finetuned_names
from albert.modeling.encoder import AlbertEncoder
from albert.modeling.classifier import AlbertClassifier
from albert.modeling.multiple_choice import AlbertMultipleChoice
from albert.modeling.squad import AlbertSquadModel
from albert.modeling.token_classifier import AlbertTokenClassifier
from tests import helpers
from tests.albert.finetuning.finetune_helpers import TINY_GIN

CONFIG = helpers.tiny_config(
    vocab_size=50, num_layers=3, num_heads=4, max_position_embeddings=16
)
T = 7


def _model(kind, seed=0):
  """A built model of head `kind`, every weight perturbed (no zero biases,
  no unit LayerNorms that could hide a misplaced tensor)."""
  tf.random.set_seed(seed)
  encoder = AlbertEncoder.from_config_object(CONFIG)
  model = {
      "sequence_classification": lambda: AlbertClassifier(
          encoder, num_classes=3
      ),
      "regression": lambda: AlbertClassifier(encoder, num_classes=1),
      "multiple_choice": lambda: AlbertMultipleChoice(encoder),
      "token_classification": lambda: AlbertTokenClassifier(
          encoder, num_classes=5
      ),
      "squad_v1": lambda: AlbertSquadModel(encoder, version="1.1"),
      "squad_v2": lambda: AlbertSquadModel(encoder, version="2.0"),
  }[kind]()
  model(model.dummy_inputs())
  rng = np.random.default_rng(seed)
  for variable in model.weights:
    variable.assign_add(
        0.2 * rng.normal(size=variable.shape).astype(np.float32)
    )
  return model


def _inputs(batch=2, choices=None, seed=1):
  rng = np.random.default_rng(seed)
  shape = (batch, T) if choices is None else (batch, choices, T)
  ids = rng.integers(5, CONFIG.vocab_size, size=shape).astype(np.int32)
  mask = np.ones_like(ids)
  mask[0, ..., T - 2 :] = 0
  types = np.zeros_like(ids)
  types[..., 3:] = 1
  types *= mask
  inputs = dict(input_word_ids=ids, input_mask=mask, input_type_ids=types)
  inputs["paragraph_mask"] = types
  return inputs


def _ours(model, inputs):
  outputs = model({k: tf.constant(v) for k, v in inputs.items()})
  return {k: v.numpy() for k, v in outputs.items()}


KINDS = (
    "sequence_classification",
    "regression",
    "multiple_choice",
    "token_classification",
    "squad_v1",
    "squad_v2",
)


@pytest.mark.parametrize("kind", KINDS)
def test_original_round_trip_is_bit_exact(tmp_path, kind):
  model = _model(kind)
  written = original.finetuned_to_original(
      model, CONFIG, source="test", output_dir=str(tmp_path / "tf1"), step=42
  )
  reader = tf.train.load_checkpoint(written)
  names = set(reader.get_variable_to_shape_map())
  assert not [n for n in names if n.startswith("cls/predictions")]
  head = finetuned_names.head_kind(model)
  if head == "squad_v1":
    np.testing.assert_array_equal(
        reader.get_tensor("cls/squad/output_weights"),
        model.span_head.dense.kernel.numpy().T,  # [2, H], start row first
    )
  elif head == "squad_v2":
    assert "answer_class/dense_1/bias" not in names  # use_bias=False
    np.testing.assert_array_equal(
        reader.get_tensor("end_logits/LayerNorm/gamma"),
        model.span_head.end_layer_norm.gamma.numpy(),
    )
  else:  # [num_labels, H], as classifier_utils.create_model stores it
    np.testing.assert_array_equal(
        reader.get_tensor("output_weights"),
        model.classifier.kernel.numpy().T,
    )
  assert int(reader.get_tensor("global_step")) == 42
  back = _model(kind, seed=5)  # other weights, overwritten by the reading
  step = original.finetuned_from_original(
      back, checkpoint=written, config=CONFIG
  )
  assert step == 42
  for a, b in zip(back.weights, model.weights):
    np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.name)


def test_a_head_of_another_kind_is_named(tmp_path):
  written = original.finetuned_to_original(
      _model("squad_v1"),
      CONFIG,
      source="test",
      output_dir=str(tmp_path / "tf1"),
      step=1,
  )
  with pytest.raises(errors.ConversionError, match="cls/squad"):
    original.finetuned_from_original(
        _model("sequence_classification"), checkpoint=written, config=CONFIG
    )


def _transformers_outputs(hf, kind, inputs):
  torch = pytest.importorskip("torch")
  args = dict(
      input_ids=torch.tensor(inputs["input_word_ids"], dtype=torch.long),
      attention_mask=torch.tensor(inputs["input_mask"], dtype=torch.long),
      token_type_ids=torch.tensor(inputs["input_type_ids"], dtype=torch.long),
  )
  with torch.no_grad():
    out = hf.eval()(**args)
  if kind == "squad_v1":
    return {
        "start_logits": out.start_logits.numpy(),
        "end_logits": out.end_logits.numpy(),
    }
  return {"logits": out.logits.numpy()}


@pytest.mark.parametrize(
    "kind",
    [
        "sequence_classification",
        "regression",
        "multiple_choice",
        "token_classification",
        "squad_v1",
    ],
)
def test_transformers_classes_both_ways(tmp_path, kind):
  transformers = pytest.importorskip("transformers")
  model = _model(kind)
  labels = ["neg", "neu", "pos"] if kind == "sequence_classification" else None
  huggingface.finetuned_to_huggingface(
      model,
      CONFIG,
      source="test",
      output_dir=str(tmp_path / "hf"),
      labels=labels,
  )
  data = json.loads((tmp_path / "hf" / "config.json").read_text())
  (architecture,) = data["architectures"]
  hf_class = getattr(transformers, architecture)
  hf, info = hf_class.from_pretrained(
      str(tmp_path / "hf"), output_loading_info=True
  )
  assert not info["missing_keys"] and not info["unexpected_keys"], info
  if labels:
    assert hf.config.id2label == dict(enumerate(labels))
  inputs = _inputs(choices=4 if kind == "multiple_choice" else None)
  ours = _ours(model, inputs)
  theirs = _transformers_outputs(hf, kind, inputs)
  for name, value in theirs.items():
    value = value.reshape(ours[name].shape)  # regression: [B, 1] both
    got = ours[name]
    if getattr(model, "context_mask", False):  # masked: what spans never touch
      allowed = inputs["paragraph_mask"].astype(bool)
      allowed[:, 0] = True  # [CLS]
      value, got = value[allowed], got[allowed]
    np.testing.assert_allclose(value, got, atol=1e-4, err_msg=name)
  back = _model(kind, seed=5)
  huggingface.finetuned_from_huggingface(back, checkpoint=str(tmp_path / "hf"))
  for a, b in zip(back.weights, model.weights):
    if "pooler" in a.name and kind in ("token_classification", "squad_v1"):
      continue  # the transformers class has no pooler: ours keeps its own
    np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.name)


def test_squad_v2_has_no_transformers_class(tmp_path):
  with pytest.raises(
      errors.ConversionError, match="no ALBERT class for the squad_v2"
  ):
    huggingface.finetuned_to_huggingface(
        _model("squad_v2"), CONFIG, source="x", output_dir=str(tmp_path / "hf")
    )
  assert not (tmp_path / "hf").exists()


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["huggingface", "keras_hub"])
def test_command_line_with_a_recipe(tmp_path, fmt):
  # An MNLI model directory of ours -> transformers or keras-hub -> ours
  # again, by the command, with the task's recipe; the weights come back.
  from albert.finetuning import training as finetuning
  from albert.finetuning import task_state

  gin_params = TINY_GIN + ["GlueTask.seq_length = 64"]
  params = [f"--gin_param={p}" for p in gin_params]
  task = finetuning.build_task(
      gin_file=["gin/finetune/mnli.gin"], gin_param=gin_params
  )
  model = task.build_model()
  model(model.dummy_inputs())
  ours = str(tmp_path / "mnli")
  model_io.write_finetuned_dir(
      ours,
      model,
      step=7,
      model_config=task.model_config_dict(),
      files=task_state.files_of(task),
  )
  common = ["--gin_file=gin/finetune/mnli.gin", *params]
  run = helpers.run(
      [
          helpers.tool("convert_checkpoint"),
          f"--to={fmt}",
          f"--checkpoint={ours}",
          f"--output_dir={tmp_path / 'hf'}",
          *common,
      ]
  )
  assert run.returncode == 0, run.stderr[-3000:]
  if fmt == "huggingface":
    data = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert data["architectures"] == ["AlbertForSequenceClassification"]
    assert data["num_labels"] == 3
  else:
    data = json.loads((tmp_path / "hf" / "task.json").read_text())
    assert data["class_name"] == "AlbertTextClassifier"
    assert data["config"]["num_classes"] == 3
  run = helpers.run(
      [
          helpers.tool("convert_checkpoint"),
          f"--from={fmt}",
          f"--checkpoint={tmp_path / 'hf'}",
          f"--output_dir={tmp_path / 'back'}",
          *common,
      ]
  )
  assert run.returncode == 0, run.stderr[-3000:]
  back, _ = finetuning.trained_model(task, str(tmp_path / "back"), None)
  for a, b in zip(back.weights, model.weights):
    np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.name)
  assert sorted(os.listdir(tmp_path / "back")) == sorted(
      ["checkpoint", "ckpt-0.data-00000-of-00001", "ckpt-0.index"]
      + ["model_config.json"]
  )
