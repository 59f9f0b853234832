"""ONNX export (albert/serving/onnx_export.py): onnxruntime against our Keras
model in every sharing shape and head, and against the exported SavedModel
through the commands."""

import numpy as np
import onnx
import onnxruntime
import pytest
import tensorflow as tf
import tf_keras

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
  # The same weights whatever ran before in the worker: onnxruntime sums in
  # another order, and perturbed weights at four layers reach float32
  # round-off of 1e-5 of the values (1.4e-5 once, unseeded, in CI).
  tf_keras.utils.set_random_seed(0)
  config = helpers.tiny_config(**SHAPES[shape])
  encoder = _perturbed(AlbertEncoder.from_config_object(config))
  session = _session(encoder)
  for length in (11, 5):  # the sequence length is dynamic
    inputs = _inputs(config, length=length)
    ours = encoder({k: tf.constant(v) for k, v in inputs.items()})
    theirs = _run(session, inputs)
    for key in ("sequence_output", "pooled_output"):
      np.testing.assert_allclose(
          theirs[key], ours[key].numpy(), rtol=1e-5, atol=1e-5, err_msg=key
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
  tf_keras.utils.set_random_seed(0)
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
  np.testing.assert_allclose(theirs, ours.numpy(), rtol=1e-5, atol=1e-5)


def _trained_classifier(steps=150, vocab=120, length=16, seed=0):
  """A small 3-way classifier trained to tell which of the ids 5, 6, 7 a
  sequence of random ids holds (a confident model: int8 error shows as
  flipped predictions, not as ties)."""
  tf_keras.utils.set_random_seed(seed)
  config = helpers.tiny_config(
      vocab_size=vocab,
      embedding_size=32,
      hidden_size=64,
      num_heads=4,
      intermediate_size=128,
  )
  model = AlbertClassifier.from_config_object(config, num_classes=3)
  optimizer = tf_keras.optimizers.Adam(2e-3)

  @tf.function
  def step(inputs, labels):
    with tf.GradientTape() as tape:
      logits = model(inputs, training=True)["logits"]
      loss = tf.reduce_mean(
          tf_keras.losses.sparse_categorical_crossentropy(
              labels, logits, from_logits=True
          )
      )
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

  def batch(rng, size):
    ids = rng.integers(8, vocab, (size, length)).astype(np.int32)
    labels = rng.integers(0, 3, size)
    ids[np.arange(size), rng.integers(1, length, size)] = 5 + labels
    inputs = {
        "input_word_ids": ids,
        "input_mask": np.ones_like(ids),
        "input_type_ids": np.zeros_like(ids),
    }
    return inputs, labels

  rng = np.random.default_rng(seed)
  for _ in range(steps):
    inputs, labels = batch(rng, 32)
    step({k: tf.constant(v) for k, v in inputs.items()}, tf.constant(labels))
  return model, batch(np.random.default_rng(seed + 1), 600)


def test_int8_keeps_the_predictions_and_quantises_shared_weights_once():
  model, (held_out, labels) = _trained_classifier()
  float_proto = onnx_export.build(model)
  int8_proto = onnx_export.quantize_int8(float_proto)
  sessions = [
      onnxruntime.InferenceSession(
          p.SerializeToString(), providers=["CPUExecutionProvider"]
      )
      for p in (float_proto, int8_proto)
  ]
  floats, int8s = (_run(s, held_out)["logits"] for s in sessions)
  assert (floats.argmax(-1) == labels).mean() > 0.9  # it learnt the task
  agreement = (int8s.argmax(-1) == floats.argmax(-1)).mean()
  print(f"int8 agrees with float32 on {agreement:.4f} of 600")
  assert agreement >= 0.99, agreement
  # Each weight of a matrix product quantised once: one int8 copy per
  # distinct float kernel, though the shared layer's are used per layer.
  kernels = {
      n.input[1]
      for n in float_proto.graph.node
      if n.op_type == "MatMul" and n.input[1].endswith("/kernel")
  }
  quantised = [
      t.name
      for t in int8_proto.graph.initializer
      if t.data_type == onnx.TensorProto.INT8 and t.name.endswith("_quantized")
  ]
  assert sorted(quantised) == sorted(f"{k}_quantized" for k in kernels)
  uses = [n for n in int8_proto.graph.node if n.op_type == "MatMulInteger"]
  assert len(uses) > len(kernels)  # the shared kernels serve every layer
  # An embedding model's vectors keep their direction.
  settings = {"pooling": "mean", "normalize": False}
  vectors = []
  for proto in (
      onnx_export.build(model.encoder, settings),
      onnx_export.quantize_int8(onnx_export.build(model.encoder, settings)),
  ):
    session = onnxruntime.InferenceSession(
        proto.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    vectors.append(_run(session, held_out)["embedding"])
  a, b = vectors
  cosine = (
      (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
  )
  print(f"least embedding cosine int8 / float32: {cosine.min():.5f}")
  assert cosine.min() >= 0.99, cosine.min()


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
  # int8: the same answers within quantisation error; a SavedModel has no
  # --quantize (one line, nothing written).
  for name, flags, ok in (
      ("int8", ["--format=onnx", "--quantize=int8"], True),
      ("int8_sm", ["--quantize=int8"], False),
  ):
    run = helpers.run(
        [
            "-m",
            "albert.run_export",
            f"--model_dir={model_dir[0]}",
            f"--checkpoint={model_dir[0]}/ckpt-1",
            f"--export_dir={tmp_path / name}",
            *flags,
        ]
    )
    if not ok:
      helpers.assert_one_line(run, "run_export", "applies to --format=onnx")
      assert not (tmp_path / name).exists()
      continue
    assert run.returncode == 0, run.stderr[-3000:]
    session = onnxruntime.InferenceSession(
        str(tmp_path / name / "encoder.onnx"),
        providers=["CPUExecutionProvider"],
    )
    graph = onnx.load(str(tmp_path / name / "encoder.onnx")).graph
    assert any(n.op_type == "MatMulInteger" for n in graph.node)
    inputs = _inputs(config, length=SEQ)
    saved = signature(**{k: tf.constant(v) for k, v in inputs.items()})
    pooled = _run(session, inputs)["pooled_output"]
    want = saved["pooled_output"].numpy()
    cosine = (
        (pooled * want).sum(-1)
        / np.linalg.norm(pooled, axis=-1)
        / np.linalg.norm(want, axis=-1)
    )
    assert cosine.min() > 0.99, cosine


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
  # --quantize=int8 writes the int8 form (its accuracy: the test above);
  # a SavedModel export refuses it before any work.
  common = dict(
      mode="export",
      model_dir=model_dir,
      gin_file=["gin/finetune/mnli.gin"],
      gin_param=gin_params,
      quantize="int8",
  )
  finetuning.run(
      export_dir=str(tmp_path / "int8"), export_format="onnx", **common
  )
  graph = onnx.load(str(tmp_path / "int8" / "model.onnx")).graph
  assert any(n.op_type == "MatMulInteger" for n in graph.node)
  with pytest.raises(ValueError, match="applies to --export_format=onnx"):
    finetuning.run(export_dir=str(tmp_path / "sm"), **common)
  assert not (tmp_path / "sm").exists()
