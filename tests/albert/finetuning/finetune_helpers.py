"""Shared by the fine-tuning tests: a tiny model, its init checkpoint, gin
bindings, and a fresh-process SavedModel call."""

import base64
import json
import os
from typing import Sequence

import gin
import tf_keras

from albert import model_dir as model_dir_lib
from albert.finetuning import training as finetuning
from albert.modeling.pretrainer import AlbertPretrainer
from tests.conftest import VOCAB_SIZE
from tests import helpers as test_helpers

TINY = test_helpers.tiny_config(
    vocab_size=VOCAB_SIZE,
    embedding_size=32,
    hidden_size=64,
    num_heads=4,
    intermediate_size=128,
    max_position_embeddings=128,
)
TINY_GIN = [
    f"AlbertConfig.{k} = {v!r}"
    for k, v in (
        ("vocab_size", TINY.vocab_size),
        ("embedding_size", TINY.embedding_size),
        ("hidden_size", TINY.hidden_size),
        ("num_layers", TINY.num_layers),
        ("num_heads", TINY.num_heads),
        ("intermediate_size", TINY.intermediate_size),
        ("max_position_embeddings", TINY.max_position_embeddings),
    )
]
TRAINER_GIN = [
    "TrainerConfig.steps_per_loop = 50",
    "TrainerConfig.checkpoint_interval = 1000",
    "TrainerConfig.deterministic = True",
]


def init_checkpoint(folder) -> str:
  """A model directory holding a randomly initialised tiny pretrainer, the
  same whatever ran before in the process (Keras draws unseeded initialiser
  seeds from Python's `random`, which tf.random.set_seed does not reset)."""
  tf_keras.utils.set_random_seed(0)
  model_dir_lib.write_model_dir(
      str(folder), AlbertPretrainer.from_config_object(TINY)
  )
  return str(folder)


def finetune(mode: str, gin_file: str, params, **kwargs):
  """`finetuning.run` with the tiny model and a clean gin state."""
  gin.clear_config()
  return finetuning.run(
      mode=mode,
      gin_file=[gin_file],
      gin_param=TINY_GIN + TRAINER_GIN + list(params),
      **kwargs,
  )


def eval_of_best(results: dict) -> dict:
  """What `--mode=eval` reports for the best checkpoint of a train_and_eval
  run that returned `results`: its metrics, with its step as
  `checkpoint_step`."""
  metrics = {k: v for k, v in results.items() if k != "best_checkpoint_step"}
  return {**metrics, "checkpoint_step": results["best_checkpoint_step"]}


def call_saved_model(
    export_dir: str,
    inputs: dict,
    signature: str = "serving_default",
    binary: Sequence[str] = (),
) -> dict:
  """Calls a signature in a fresh process importing only TF and TF-Text.

  `inputs` maps argument names to lists (of strings or of lists of strings;
  those named in `binary` are lists of bytes); returns the outputs as lists
  (bytes decoded).
  """
  inputs = {
      k: ([base64.b64encode(b).decode() for b in v] if k in binary else v)
      for k, v in inputs.items()
  }
  script = f"""
import base64, json, sys
import tensorflow as tf
import tensorflow_text  # registers the SentencePiece ops
assert not any(m == "albert" or m.startswith("albert.") for m in sys.modules)
fn = tf.saved_model.load({export_dir!r}).signatures[{signature!r}]
inputs = json.loads(sys.stdin.read())
for k in {list(binary)!r}:
  inputs[k] = [base64.b64decode(v) for v in inputs[k]]
out = fn(**{{k: tf.constant(v) for k, v in inputs.items()}})
def decode(x):
  if isinstance(x, list):
    return [decode(v) for v in x]
  return x.decode() if isinstance(x, bytes) else x
print(json.dumps({{k: decode(v.numpy().tolist()) for k, v in out.items()}}))
"""
  run = test_helpers.run(
      ["-c", script],
      input=json.dumps(inputs),
      timeout=300,
      cwd=os.path.dirname(export_dir),  # not the repository
      # Not the checkout on the path either: only TF and TF-Text are wanted.
      env=test_helpers.SERVING_ENV,
  )
  assert run.returncode == 0, run.stderr[-3000:]
  return json.loads(run.stdout.strip().splitlines()[-1])
