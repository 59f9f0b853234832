"""The TF Hub idiom on our SavedModels: docs/serving.md's Keras example, run as
written (only the export directory changed) in a fresh process with
`tensorflow_hub` and without this package, then checked: the encoder's
weights changed, the model learns, the word pieces are the signature's.

The fixture's encoder is untrained, so docs/serving.md's 5 epochs leave the loss
at chance (ln 2, up or down by the dropout's noise: a clean-clone run once
ended above where it began). The check trains on for 100 epochs, about 5 s,
and asks for the 24 examples learnt: ten runs ended at a loss of 0.009
to 0.025, every example right."""

import json

import pytest

from tests.albert.serving.conftest import run_docs_block

# Every test here needs the exported SavedModels (serving/conftest.py).
pytestmark = pytest.mark.slow

pytest.importorskip("tensorflow_hub")

# Appended to docs/serving.md's block; uses its variables.
_CHECKS = r"""
import json, sys
import numpy as np

assert not any(m == "albert" or m.startswith(("albert.", "official"))
               for m in sys.modules)
loaded = hub.KerasLayer(f"{export_dir}/encoder", trainable=True)
sample = tf.constant(["The function returns a list.", "", "1,000 items x4,"])
words = preprocessor.tokenize(sample)
flat = preprocessor.signatures["serving_default"](text=sample)["input_word_ids"]
packed = pack([tokenize(sample)])
outputs = encoder(packed)
more = model.fit(tf.constant(texts * 4), tf.constant(labels * 4), epochs=100,
                 batch_size=8, verbose=0)
_, accuracy = model.evaluate(tf.constant(texts * 4), tf.constant(labels * 4),
                             verbose=0)
changed = sum(
    not np.array_equal(a.numpy(), b.numpy())
    for a, b in zip(encoder.trainable_weights, loaded.trainable_weights))
print(json.dumps({
    "ragged_rank": words.ragged_rank,
    "words": words.to_list(),
    "flat": flat.numpy().tolist(),
    "packed_shape": packed["input_word_ids"].shape.as_list(),
    "num_layers": len(outputs["encoder_outputs"]),
    "trainable": len(encoder.trainable_weights),
    "changed": changed,
    "loss": history.history["loss"],
    "more_loss": more.history["loss"],
    "accuracy": accuracy,
}))
"""


def test_readme_keras_classifier_on_hub_layers_trains(model_dir, export_dir):
  _, pretrainer = model_dir
  run = run_docs_block("hub.KerasLayer", export_dir, _CHECKS)
  assert run.returncode == 0, run.stderr[-3000:]
  lines = run.stdout.strip().splitlines()
  assert lines[0].startswith("loss ["), lines  # docs/serving.md's own print
  result = json.loads(lines[-1])
  assert result["ragged_rank"] == 2
  # Words flatten to exactly the pieces the fixed-length signature packs.
  for words, ids in zip(result["words"], result["flat"]):
    pieces = [i for word in words for i in word]
    assert ids[1 : 1 + len(pieces)] == pieces
  assert result["packed_shape"] == [3, 64]  # docs/serving.md's seq_length
  assert result["num_layers"] == pretrainer.encoder.config.num_layers
  assert result["trainable"] == len(pretrainer.encoder.trainable_variables)
  assert result["changed"] == result["trainable"]  # fine-tuned, every weight
  assert len(result["loss"]) == 5, result["loss"]  # docs/serving.md's epochs
  assert result["more_loss"][-1] < 0.2, result["more_loss"]
  assert result["accuracy"] == 1.0, result
