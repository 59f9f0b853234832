"""The TF Hub idiom on our SavedModels, in a fresh process with
`tensorflow_hub`: hub.KerasLayer(preprocessing.tokenize),
hub.KerasLayer(preprocessing.bert_pack_inputs, arguments=...) and
hub.KerasLayer(encoder, trainable=True) in a tf_keras classifier that
trains on raw text."""

import json
import sys

import pytest

from tests import helpers
from tests.albert.serving.test_export import _export

pytest.importorskip("tensorflow_hub")

_SCRIPT = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
import numpy as np
import tensorflow as tf
import tensorflow_hub as hub
import tensorflow_text  # noqa: F401
import tf_keras
assert not any(m == "albert" or m.startswith("albert.") for m in sys.modules)
root = sys.argv[1]
pre = hub.load(root + "/preprocessing")
enc = hub.load(root + "/encoder")
texts = tf.constant(["The function returns a list.", "", "1,000 items x4,"])
words = pre.tokenize(texts)
flat = pre.signatures["serving_default"](text=texts)["input_word_ids"]

text = tf_keras.layers.Input(shape=(), dtype=tf.string)
tokens = hub.KerasLayer(pre.tokenize)(text)
packed = hub.KerasLayer(pre.bert_pack_inputs, arguments=dict(seq_length=20))(
    [tokens])
encoder = hub.KerasLayer(enc, trainable=True)
outputs = encoder(packed)
logits = tf_keras.layers.Dense(2)(outputs["pooled_output"])
model = tf_keras.Model(text, logits)
model.compile(tf_keras.optimizers.Adam(1e-3),
              tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True))
x = tf.constant(["the file is true", "a false list", "true values",
                 "the false module"] * 8)
y = tf.constant([1, 0, 1, 0] * 8)
before = [v.numpy().copy() for v in encoder.trainable_weights]
history = model.fit(x, y, epochs=6, batch_size=8, verbose=0, shuffle=False)
after = [v.numpy() for v in encoder.trainable_weights]
print(json.dumps({
    "ragged_rank": words.ragged_rank,
    "words": words.to_list(),
    "flat": flat.numpy().tolist(),
    "num_layers": len(outputs["encoder_outputs"]),
    "trainable": len(encoder.trainable_weights),
    "variables": len(enc.variables),
    "changed": sum(not np.array_equal(a, b) for a, b in zip(before, after)),
    "loss": history.history["loss"],
}))
"""


def test_keras_classifier_from_hub_layers_trains_on_raw_text(
    model_dir, spm_model, tmp_path
):
  root, pretrainer = model_dir
  out = tmp_path / "export"
  _export(root, spm_model, out)
  run = helpers.run([sys.executable, "-c", _SCRIPT, str(out)], timeout=600)
  assert run.returncode == 0, run.stderr[-3000:]
  result = json.loads(run.stdout.strip().splitlines()[-1])
  assert result["ragged_rank"] == 2
  # Words flatten to exactly the pieces the fixed-length signature packs.
  for words, ids in zip(result["words"], result["flat"]):
    pieces = [i for word in words for i in word]
    assert ids[1 : 1 + len(pieces)] == pieces
  assert result["num_layers"] == pretrainer.encoder.config.num_layers
  assert result["trainable"] == len(pretrainer.encoder.trainable_variables)
  assert result["changed"] == result["trainable"]  # fine-tuned, every weight
  assert result["loss"][-1] < 0.5 * result["loss"][0], result["loss"]
