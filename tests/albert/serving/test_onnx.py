"""ONNX export (albert/serving/onnx_export.py): onnxruntime against our Keras
model in every sharing shape and head, and against the exported SavedModel
through the commands."""

import numpy as np
import onnxruntime
import pytest
import tensorflow as tf

from albert.finetuning import training as finetuning
from albert.finetuning import task_state
from albert.checkpoint_conversion import model_io
from albert.modeling.classifier import AlbertClassifier
from albert.modeling.encoder import AlbertEncoder
from albert.modeling.squad import AlbertSquadModel
from albert.modeling.token_classifier import AlbertTokenClassifier
from albert.serving import onnx_export
from official.errors import InputError
from tests import helpers
from tests.albert.serving.conftest import SEQ
from tests.albert.finetuning.finetune_helpers import TINY_GIN

SHAPES = {
    "shared": {},
    "groups_and_inner": dict(
        num_layers=4, num_hidden_groups=2, inner_group_num=2
    ),
    "unshared": dict(sharing="none", num_layers=3),
    "attention_shared": dict(sharing="attention", num_layers=3),
    "e_equals_h": dict(embedding_size=16),
    "gelu_exact": dict(hidden_act="gelu_exact"),
    "relu": dict(hidden_act="relu"),
    "swish": dict(hidden_act="swish"),
}


def _inputs(config, batch=3, length=11, seed=0):
  rng = np.random.default_rng(seed)
  ids = rng.integers(5, config.vocab_size, (batch, length)).astype(np.int32)
  mask = np.ones_like(ids)
  mask[0, length - 4 :] = 0
  types = np.zeros_like(ids)
  types[1:, length // 2 :] = 1
  return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": types}


def _session(model):
  return onnxruntime.InferenceSession(
      onnx_export.build(model).SerializeToString(),
      providers=["CPUExecutionProvider"],
  )


def _run(session, inputs):
  names = [o.name for o in session.get_outputs()]
  return dict(zip(names, session.run(None, inputs)))


def _perturbed(model, seed=0):
  """Every weight moved off its initialisation (no zero bias or unit
  LayerNorm that could hide a misplaced tensor)."""
  model(model.dummy_inputs())
  rng = np.random.default_rng(seed)
  for v in model.weights:
    v.assign_add(0.3 * rng.normal(size=v.shape).astype(np.float32))
  return model


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_encoder_matches_keras_and_stores_each_weight_once(shape):
  config = helpers.tiny_config(**SHAPES[shape])
  encoder = _perturbed(AlbertEncoder.from_config_object(config))
  session = _session(encoder)
  for length in (11, 5):  # the sequence length is dynamic
    inputs = _inputs(config, length=length)
    ours = encoder({k: tf.constant(v) for k, v in inputs.items()})
    theirs = _run(session, inputs)
    for key in ("sequence_output", "pooled_output"):
      np.testing.assert_allclose(
          theirs[key], ours[key].numpy(), atol=1e-5, err_msg=key
      )
  proto = onnx_export.build(encoder)
  stored = sum(
      int(np.prod(t.dims))
      for t in proto.graph.initializer
      if "/" in t.name and not t.name.startswith("scalar/")
  )
  assert stored == encoder.count_params()


@pytest.mark.parametrize(
    "kind", ["classification", "regression", "token_classification"]
)
def test_heads_match_keras(kind):
  config = helpers.tiny_config()
  encoder = AlbertEncoder.from_config_object(config)
  model = {
      "classification": lambda: AlbertClassifier(encoder, num_classes=3),
      "regression": lambda: AlbertClassifier(encoder, num_classes=1),
      "token_classification": lambda: AlbertTokenClassifier(
          encoder, num_classes=5
      ),
  }[kind]()
  model = _perturbed(model)
  inputs = _inputs(config)
  ours = model({k: tf.constant(v) for k, v in inputs.items()})["logits"]
  theirs = _run(_session(model), inputs)["logits"]
  assert theirs.shape == tuple(ours.shape)
  np.testing.assert_allclose(theirs, ours.numpy(), atol=1e-5)


def test_heads_without_an_onnx_form_are_refused():
  encoder = AlbertEncoder.from_config_object(helpers.tiny_config())
  squad = AlbertSquadModel(encoder, version="1.1")
  squad(squad.dummy_inputs())
  with pytest.raises(InputError, match="the squad_v1 head has no ONNX export"):
    onnx_export.build(squad)


@pytest.mark.slow
def test_run_export_onnx_matches_the_saved_model(
    model_dir, export_dir, tmp_path
):
  out = tmp_path / "onnx"
  run = helpers.run(
      [
          "-m",
          "albert.run_export",
          f"--model_dir={model_dir[0]}",
          f"--checkpoint={model_dir[0]}/ckpt-1",
          f"--export_dir={out}",
          "--format=onnx",
      ]
  )
  assert run.returncode == 0, run.stderr[-3000:]
  assert run.stdout.strip() == f"exported {out}/encoder.onnx"
  session = onnxruntime.InferenceSession(
      str(out / "encoder.onnx"), providers=["CPUExecutionProvider"]
  )
  signature = tf.saved_model.load(str(export_dir / "encoder")).signatures[
      "serving_default"
  ]
  config = model_dir[1].encoder.config
  for length in (SEQ, 7):
    inputs = _inputs(config, length=length, seed=length)
    saved = signature(**{k: tf.constant(v) for k, v in inputs.items()})
    theirs = _run(session, inputs)
    for key in ("sequence_output", "pooled_output"):
      np.testing.assert_allclose(
          theirs[key], saved[key].numpy(), atol=1e-4, err_msg=key
      )
  # bfloat16 is a SavedModel option: one line, nothing written.
  run = helpers.run(
      [
          "-m",
          "albert.run_export",
          f"--model_dir={model_dir[0]}",
          f"--export_dir={tmp_path / 'bf16'}",
          "--format=onnx",
          "--precision=bfloat16",
      ]
  )
  helpers.assert_one_line(run, "run_export", "the ONNX export is float32")
  assert not (tmp_path / "bf16").exists()


def test_fine_tuning_export_onnx(tmp_path):
  gin_params = TINY_GIN + ["GlueTask.seq_length = 16"]
  task = finetuning.build_task(
      gin_file=["gin/finetune/mnli.gin"], gin_param=gin_params
  )
  model = _perturbed(task.build_model())
  model_dir = str(tmp_path / "mnli")
  model_io.write_finetuned_dir(
      model_dir,
      model,
      step=3,
      model_config=task.model_config_dict(),
      files=task_state.files_of(task),
  )
  export_dir = tmp_path / "onnx"
  finetuning.run(
      mode="export",
      model_dir=model_dir,
      gin_file=["gin/finetune/mnli.gin"],
      gin_param=gin_params,
      export_dir=str(export_dir),
      export_format="onnx",
  )
  session = onnxruntime.InferenceSession(
      str(export_dir / "model.onnx"), providers=["CPUExecutionProvider"]
  )
  inputs = _inputs(model.encoder.config, length=16)
  ours = model({k: tf.constant(v) for k, v in inputs.items()})["logits"]
  np.testing.assert_allclose(
      _run(session, inputs)["logits"], ours.numpy(), rtol=1e-5, atol=1e-5
  )
