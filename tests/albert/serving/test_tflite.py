"""`python -m albert.export_tflite`: the TFLite interpreter against the
SavedModels, for the encoder (float32 and dynamic-range int8), the
regression and token-classification heads, and the one-line errors. A
fine-tuned classifier against its SavedModel: tests/albert/finetuning/
test_text_classification.py (it has one trained)."""

import os
import types

import numpy as np
import pytest
import tensorflow as tf

from albert.modeling.encoder import AlbertEncoder
from albert.serving import tflite_export
from albert.modeling.classifier import AlbertClassifier
from albert.modeling.multiple_choice import AlbertMultipleChoice
from albert.modeling.token_classifier import AlbertTokenClassifier
from albert.serving import litert
from tests import helpers

# Every test here needs the exported SavedModels (serving/conftest.py).
pytestmark = pytest.mark.slow

_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


def run_export_tflite(args):
  """`python -m albert.export_tflite ARGS`, which must succeed."""
  run = helpers.run(["-m", "albert.export_tflite", *args], timeout=600)
  assert run.returncode == 0, run.stderr[-3000:]


def tflite_runner(path):
  """The `serving_default` signature runner of a .tflite file."""
  with open(path, "rb") as f:
    interpreter = litert.interpreter(model_content=f.read())
  return interpreter.get_signature_runner("serving_default")


def test_encoder_float32_and_int8_match_the_saved_model(
    model_dir, export_dir, tmp_path
):
  root, _ = model_dir
  encoder = tf.saved_model.load(str(export_dir / "encoder"))
  rng = np.random.default_rng(0)
  seq = 24
  ids = rng.integers(5, 2000, (6, seq)).astype(np.int32)
  mask = np.ones_like(ids)
  mask[1, 10:] = 0
  types = np.zeros_like(ids)
  types[:, 12:] = 1
  inputs = dict(input_word_ids=ids, input_mask=mask, input_type_ids=types)
  want = encoder.signatures["serving_default"](
      **{k: tf.constant(v) for k, v in inputs.items()}
  )
  sizes = {}
  for precision in ("float32", "dynamic_int8"):
    path = str(tmp_path / f"encoder_{precision}.tflite")
    run_export_tflite(
        [
            f"--model_dir={root}",
            f"--checkpoint={root}/ckpt-1",
            f"--output={path}",
            f"--seq_length={seq}",
            f"--precision={precision}",
        ]
    )
    sizes[precision] = os.path.getsize(path)
    got = tflite_runner(path)(**inputs)
    for name in ("pooled_output", "sequence_output"):
      error = np.abs(got[name] - want[name].numpy()).max()
      if precision == "float32":
        assert error < 1e-4, (name, error)
      else:  # int8 weights: close, not equal
        assert 1e-6 < error < 0.5, (name, error)
  assert sizes["dynamic_int8"] < 0.5 * sizes["float32"]


def _packed(rng, batch, seq, vocab):
  ids = rng.integers(5, vocab, (batch, seq)).astype(np.int32)
  mask = np.ones_like(ids)
  mask[0, seq // 2 :] = 0
  return dict(
      input_word_ids=ids, input_mask=mask, input_type_ids=np.zeros_like(ids)
  )


@pytest.mark.parametrize("kind", ["regression", "token"])
def test_regression_and_token_heads_convert(kind, tmp_path):
  tf.random.set_seed(5)
  config = helpers.tiny_config()
  encoder = AlbertEncoder.from_config_object(config)
  if kind == "regression":
    model = AlbertClassifier(encoder, num_classes=1)
  else:
    model = AlbertTokenClassifier(encoder, num_classes=5)
  model(model.dummy_inputs())
  task = types.SimpleNamespace(
      is_regression=kind == "regression", embedding_settings=lambda: None
  )
  outputs = tflite_export.finetuned_outputs(task, model)
  flatbuffer = tflite_export.convert(
      model, outputs, seq_length=12, precision="float32"
  )
  path = str(tmp_path / "model.tflite")
  tflite_export.write(path, flatbuffer)
  inputs = _packed(np.random.default_rng(1), 3, 12, config.vocab_size)
  got = tflite_runner(path)(**inputs)
  logits = model(inputs, training=False)["logits"].numpy()
  if kind == "regression":
    assert sorted(got) == ["score"]
    np.testing.assert_allclose(got["score"], logits[:, 0], atol=1e-5)
  else:
    assert got["logits"].shape == (3, 12, 5)
    np.testing.assert_allclose(got["logits"], logits, atol=1e-5)
    np.testing.assert_allclose(got["probabilities"].sum(-1), 1.0, atol=1e-5)


def test_multiple_choice_and_span_models_are_refused():
  encoder = AlbertEncoder.from_config_object(helpers.tiny_config())
  race = types.SimpleNamespace(embedding_settings=lambda: None)
  with pytest.raises(ValueError, match="serve this one as a SavedModel"):
    tflite_export.finetuned_outputs(
        race, AlbertMultipleChoice(encoder, num_classes=1)
    )
  with pytest.raises(ValueError, match="not a classification"):
    tflite_export.finetuned_outputs(race, encoder)


def _export_error(args):
  run = helpers.run(["-m", "albert.export_tflite", *args], timeout=300)
  assert run.returncode == 1, run.stderr[-2000:]
  assert "Traceback" not in run.stderr
  return run.stderr.strip().splitlines()[-1]


def test_bad_input_is_one_line_and_writes_nothing(model_dir, tmp_path):
  root, _ = model_dir
  output = tmp_path / "out" / "encoder.tflite"
  last = _export_error([f"--model_dir={root}", f"--output={output}"])
  assert last.startswith("export_tflite: error: --output="), last
  assert "does not exist" in last, last
  output = tmp_path / "encoder.tflite"
  last = _export_error([f"--model_dir={tmp_path}/none", f"--output={output}"])
  assert "--model_dir=" in last and "does not exist" in last, last
  last = _export_error(
      [
          f"--model_dir={root}",
          f"--checkpoint={root}/ckpt-1",
          f"--output={output}",
          "--seq_length=65",
      ]
  )
  assert "--seq_length=65: the model takes 2 to 64 tokens" in last, last
  assert os.listdir(tmp_path) == []
