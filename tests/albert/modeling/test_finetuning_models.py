"""Fine-tuning models: shapes and `EncoderWithHeads` config round trips."""

import numpy as np
import tensorflow as tf

from albert.modeling.classifier import AlbertClassifier
from albert.modeling.multiple_choice import AlbertMultipleChoice
from albert.modeling.squad import AlbertSquadModel
from tests.albert.finetuning.finetune_helpers import TINY


def _inputs(shape):
  return {
      "input_word_ids": tf.ones(shape, tf.int32),
      "input_mask": tf.ones(shape, tf.int32),
      "input_type_ids": tf.zeros(shape, tf.int32),
  }


def test_models_round_trip_their_config_and_have_the_documented_shapes():
  cases = [
      (AlbertClassifier, {"num_classes": 3, "dropout_rate": 0.2}),
      (AlbertMultipleChoice, {"dropout_rate": 0.0}),
      (AlbertSquadModel, {"version": "2.0", "start_n_top": 3, "end_n_top": 2}),
  ]
  for cls, kwargs in cases:
    model = cls.from_config_object(TINY, **kwargs)
    config = model.get_config()
    assert {k: config[k] for k in kwargs} == kwargs
    clone = cls.from_config(config)
    clone(clone.dummy_inputs())
    assert [w.shape for w in clone.weights] == [w.shape for w in model.weights]
  classifier = AlbertClassifier.from_config_object(TINY, num_classes=3)
  assert classifier(_inputs([2, 7]))["logits"].shape == (2, 3)
  choice = AlbertMultipleChoice.from_config_object(TINY)
  logits = choice(_inputs([2, 4, 7]))["logits"]
  assert logits.shape == (2, 4)
  # Each option is scored on its own: the same option gives the same logit.
  np.testing.assert_allclose(
      logits.numpy()[:, 0], logits.numpy()[:, 1], rtol=1e-5
  )
