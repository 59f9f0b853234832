"""`python -m albert.export_tflite`: the TFLite interpreter against the
SavedModels, for the encoder and a fine-tuned classifier, float32 and
dynamic-range int8."""

import os

import numpy as np
import tensorflow as tf

from albert import finetuning
from tests import helpers
from tests.albert.serving.test_export import _export
from tests.albert.tasks import finetune_helpers
from tests.albert.tasks.test_text_classification import TRAIN
from tests.albert.tasks.test_text_classification import write_own_csv

_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


def _tflite(args):
  run = helpers.run(["-m", "albert.export_tflite", *args], timeout=600)
  assert run.returncode == 0, run.stderr[-3000:]


def _runner(path):
  with open(path, "rb") as f:
    interpreter = tf.lite.Interpreter(model_content=f.read())
  return interpreter.get_signature_runner("serving_default")


def test_encoder_float32_and_int8_match_the_saved_model(
    model_dir, spm_model, tmp_path
):
  root, pretrainer = model_dir
  export_dir = tmp_path / "export"
  _export(root, spm_model, export_dir)
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
    _tflite(
        [
            f"--model_dir={root}",
            f"--checkpoint={root}/ckpt-1",
            f"--output={path}",
            f"--seq_length={seq}",
            f"--precision={precision}",
        ]
    )
    sizes[precision] = os.path.getsize(path)
    got = _runner(path)(**inputs)
    for name in ("pooled_output", "sequence_output"):
      error = np.abs(got[name] - want[name].numpy()).max()
      if precision == "float32":
        assert error < 1e-4, (name, error)
      else:  # int8 weights: close, not equal
        assert 1e-6 < error < 0.5, (name, error)
  assert sizes["dynamic_int8"] < 0.5 * sizes["float32"]


def test_fine_tuned_classifier_agrees_with_its_saved_model(tmp_path, spm_model):
  data_dir = str(tmp_path / "mydata")
  write_own_csv(data_dir, n_train=200, n_dev=120, n_test=2)
  init = finetune_helpers.init_checkpoint(tmp_path / "init")
  model_dir = str(tmp_path / "model")
  gin_file = "gin/finetune/text_classification.gin"
  common = dict(
      model_dir=model_dir, data_dir=data_dir, spm_model_file=spm_model
  )
  finetune_helpers.finetune(
      "train", gin_file, TRAIN, init_checkpoint=init, **common
  )
  export_dir = str(tmp_path / "export")
  finetune_helpers.finetune(
      "export", gin_file, TRAIN, export_dir=export_dir, **common
  )
  # The held-out (dev) examples as the classifier's packed inputs.
  task = finetuning.build_task(
      gin_file=[gin_file],
      gin_param=finetune_helpers.TINY_GIN + TRAIN,
      data_dir=data_dir,
      spm_model_file=spm_model,
  )
  task.use_model_dir(model_dir)
  features = list(task.featurize(task.read_examples("dev"), training=False))
  served = tf.saved_model.load(export_dir).signatures["tf_example"]
  records = [
      tf.train.Example(
          features=tf.train.Features(
              feature={
                  original: tf.train.Feature(
                      int64_list=tf.train.Int64List(value=f[ours])
                  )
                  for original, ours in zip(
                      ("input_ids", "input_mask", "segment_ids"), _INPUTS
                  )
              }
          )
      ).SerializeToString()
      for f in features
  ]
  want = served(examples=tf.constant(records))["probabilities"].numpy()
  gin_args = [
      f"--gin_file={gin_file}",
      *(f"--gin_param={p}" for p in finetune_helpers.TINY_GIN + TRAIN),
      f"--model_dir={model_dir}",
  ]
  for precision in ("float32", "dynamic_int8"):
    path = str(tmp_path / f"classifier_{precision}.tflite")
    _tflite(gin_args + [f"--output={path}", f"--precision={precision}"])
    runner = _runner(path)
    got = np.concatenate(
        [
            runner(**{k: f[k][None].astype(np.int32) for k in _INPUTS})[
                "probabilities"
            ]
            for f in features
        ]
    )
    if precision == "float32":
      np.testing.assert_allclose(got, want, atol=1e-4)
    else:
      agreement = np.mean(got.argmax(-1) == want.argmax(-1))
      assert agreement >= 0.98, agreement
