"""Skewed labels: class and positive weights against scikit-learn, the
weighted (focal) losses against numpy, per-class metrics against
scikit-learn, and one line for each bad setting."""

import re

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from albert.finetuning import class_weights
from albert.finetuning import classification_metrics
from albert.finetuning import multilabel_metrics
from albert.finetuning.own_data.text_classification import (
    TextClassificationTask,
)
from albert.finetuning.own_data.text_multilabel import TextMultiLabelTask
from albert.finetuning.own_data.token_classification import (
    TokenClassificationTask,
)
from official.errors import InputError
from official.errors import first_line

LABELS = ("neg", "neu", "pos")


def test_balanced_class_weights_are_scikit_learns():
  utils = pytest.importorskip("sklearn.utils")
  rng = np.random.default_rng(0)
  y = rng.choice(3, size=200, p=[0.9, 0.07, 0.03])
  counts = np.bincount(y, minlength=3)
  got = class_weights.class_weights("balanced", LABELS, counts, "w")
  want = utils.compute_class_weight("balanced", classes=np.arange(3), y=y)
  np.testing.assert_allclose(got, want, rtol=1e-6)
  explicit = class_weights.class_weights({"pos": 4.0}, LABELS, counts, "w")
  np.testing.assert_array_equal(explicit, [1.0, 1.0, 4.0])
  assert class_weights.class_weights(None, LABELS, counts, "w") is None
  positive = class_weights.positive_weights(
      "balanced", LABELS, [10, 50, 4], 100, "p"
  )
  np.testing.assert_allclose(positive, [90 / 10, 50 / 50, 96 / 4])


def _log_softmax(x):
  x = x - x.max(-1, keepdims=True)
  return x - np.log(np.exp(x).sum(-1, keepdims=True))


@pytest.mark.parametrize("gamma", [0.0, 2.0])
def test_weighted_softmax_loss_matches_numpy(gamma):
  rng = np.random.default_rng(1)
  logits = rng.normal(0, 2, (6, 5, 3)).astype(np.float32)  # [B, T, C]
  labels = rng.integers(0, 3, (6, 5))
  weights = np.array([0.5, 2.0, 7.0], np.float32)
  labels[0, :2] = -1  # unlabelled positions count for nothing
  terms = class_weights.softmax_loss(
      tf.constant(labels), tf.constant(logits), weights, gamma
  ).numpy()
  w = class_weights.label_weights(tf.constant(labels), weights).numpy()
  log_p = np.take_along_axis(
      _log_softmax(logits.astype(np.float64)),
      np.maximum(labels, 0)[..., None],
      -1,
  )[..., 0]
  labelled = labels >= 0
  want = labelled * weights[labels] * (1 - np.exp(log_p)) ** gamma * -log_p
  np.testing.assert_allclose(terms, want, rtol=1e-5, atol=1e-6)
  np.testing.assert_array_equal(w, labelled * weights[labels])
  # Unweighted, gamma 0: Keras's cross-entropy where labelled.
  plain = class_weights.softmax_loss(
      tf.constant(labels), tf.constant(logits), None, 0.0
  ).numpy()
  keras = tf_keras.losses.sparse_categorical_crossentropy(
      np.maximum(labels, 0), logits, from_logits=True
  ).numpy()
  np.testing.assert_allclose(plain, keras * labelled, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("gamma", [0.0, 1.5])
def test_weighted_sigmoid_loss_matches_numpy(gamma):
  rng = np.random.default_rng(2)
  logits = rng.normal(0, 3, (8, 3)).astype(np.float32)
  labels = (rng.random((8, 3)) < 0.3).astype(np.float32)
  pos_weight = np.array([1.0, 4.0, 19.0], np.float32)
  got = class_weights.sigmoid_loss(
      tf.constant(labels), tf.constant(logits), pos_weight, gamma
  ).numpy()
  p = 1 / (1 + np.exp(-logits.astype(np.float64)))
  want = -(
      pos_weight * labels * (1 - p) ** gamma * np.log(p)
      + (1 - labels) * p**gamma * np.log(1 - p)
  )
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
  if not gamma:  # TensorFlow's own weighted cross-entropy
    tf_loss = tf.nn.weighted_cross_entropy_with_logits(
        labels, logits, pos_weight
    )
    np.testing.assert_allclose(got, tf_loss.numpy(), rtol=1e-5, atol=1e-6)


def test_per_class_metrics_are_scikit_learns():
  metrics = pytest.importorskip("sklearn.metrics")
  rng = np.random.default_rng(3)
  labels = rng.choice(3, 90, p=[0.8, 0.15, 0.05])
  predictions = np.where(rng.random(90) < 0.7, labels, rng.integers(0, 3, 90))
  predictions[predictions == 2] = 0  # class 2 never predicted: precision 0
  got = classification_metrics.per_class(predictions, labels, LABELS)
  p, r, f, _ = metrics.precision_recall_fscore_support(
      labels, predictions, labels=[0, 1, 2], zero_division=0
  )
  confusion = metrics.confusion_matrix(labels, predictions, labels=[0, 1, 2])
  for i, name in enumerate(LABELS):
    assert got[f"precision/{name}"] == pytest.approx(p[i])
    assert got[f"recall/{name}"] == pytest.approx(r[i])
    assert got[f"f1/{name}"] == pytest.approx(f[i])
    for j, other in enumerate(LABELS):
      assert got[f"confusion/{name}/{other}"] == confusion[i, j]
  gold = rng.random((40, 3)) < 0.3
  chosen = rng.random((40, 3)) < 0.3
  got = multilabel_metrics.per_label(chosen, gold, LABELS)
  p, r, f, _ = metrics.precision_recall_fscore_support(
      gold, chosen, zero_division=0
  )
  for i, name in enumerate(LABELS):
    assert (got[f"precision/{name}"], got[f"recall/{name}"]) == pytest.approx(
        (p[i], r[i])
    )
    assert got[f"f1/{name}"] == pytest.approx(f[i])


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: TextClassificationTask(class_weights="balance"),
            "class_weights='balance': give 'balanced' or a dict",
        ),
        (
            lambda: TextClassificationTask(class_weights={"pos": -1.0}),
            "the weight of 'pos' is -1.0; weights must be >= 0",
        ),
        (
            lambda: TextClassificationTask(
                labels=LABELS, class_weights={"good": 2.0}
            ),
            "class_weights names 'good', not one of the 3 labels",
        ),
        (
            lambda: TextClassificationTask(focal_gamma=-1.0),
            "focal_gamma=-1.0 must be >= 0",
        ),
        (
            lambda: TextMultiLabelTask(class_weights="balanced"),
            "weight each label's positives with TextMultiLabelTask.pos_weight",
        ),
        (
            lambda: TextMultiLabelTask(labels=LABELS, pos_weight={"x": 1.0}),
            "pos_weight names 'x', not one of the 3 labels",
        ),
        (
            lambda: TokenClassificationTask(class_weights={"B-PER": "high"}),
            "the weight of 'B-PER' is 'high'; give a number",
        ),
    ],
)
def test_bad_weight_settings_are_one_line(make, message):
  # The line the command prints: gin adds the configurable's name below.
  with pytest.raises(InputError) as e:
    make()
  assert re.search(message, first_line(e.value)), str(e.value)


def test_balanced_weights_need_every_class_in_training():
  with pytest.raises(InputError, match="label 'pos' has no training examples"):
    class_weights.class_weights("balanced", LABELS, [5, 3, 0], "w")
