"""Skewed labels: class weights, positive weights and the focal loss.

A weight setting is None (every weight 1), `"balanced"`, or a dict of label
name -> weight (>= 0; labels it does not name keep 1):
  class weights     `"balanced"` is scikit-learn's `compute_class_weight`:
                    N / (C * count of class c) over the N training examples
                    (token classification: labelled words) of C classes.
  positive weights  (multi-label) `"balanced"` is each label's negatives /
                    positives, the `pos_weight` of PyTorch's
                    `BCEWithLogitsLoss`.
The weighted cross-entropy is sum(w_y * CE) / sum(w_y) over the global batch
(PyTorch's `CrossEntropyLoss(weight=...)`), so a weight changes the balance
between classes, not the loss's scale. The focal loss (Lin et al., 2017,
"Focal Loss for Dense Object Detection", equation 5) scales each term by
(1 - p_t)^gamma, p_t the probability given to the right answer; gamma 0 is
the cross-entropy.
"""

from typing import Dict, Optional, Sequence, Union

from absl import logging
import numpy as np
import tensorflow as tf

from official.errors import InputError

BALANCED = "balanced"
WeightSpec = Optional[Union[str, Dict[str, float]]]


def check_spec(spec: WeightSpec, setting: str) -> None:
  """Refuses a setting that is not None, "balanced" or a dict of label
  names to weights >= 0 (the names are checked by `weights`)."""
  if spec is None or spec == BALANCED:
    return
  if not isinstance(spec, dict):
    raise InputError(
        f"{setting}={spec!r}: give 'balanced' or a dict of label -> weight, "
        "e.g. {'spam': 5.0}"
    )
  for label, weight in spec.items():
    if isinstance(weight, bool) or not isinstance(weight, (int, float)):
      raise InputError(
          f"{setting}: the weight of {label!r} is {weight!r}; give a number"
      )
    if not np.isfinite(weight) or weight < 0:
      raise InputError(
          f"{setting}: the weight of {label!r} is {weight}; weights must be "
          ">= 0"
      )


def check_gamma(gamma: float, setting: str) -> None:
  if not np.isfinite(gamma) or gamma < 0:
    raise InputError(f"{setting}={gamma} must be >= 0 (0: no focal term)")


def check_labels(spec: WeightSpec, labels: Sequence[str], setting: str):
  """Refuses a weight for a label outside `labels`."""
  if isinstance(spec, dict):
    unknown = sorted(set(spec) - set(labels))
    if unknown:
      raise InputError(
          f"{setting} names {unknown[0]!r}, not one of the "
          f"{len(labels)} labels {list(labels)[:10]}"
      )


def _weights(spec, labels, counts, setting, balanced, lacking):
  """[L] float32 weights by `spec` (None: None): `balanced(counts)` for
  "balanced", where every count must be > 0 (else one line naming the
  label, which has no `lacking`), or the dict's weights (others 1)."""
  if spec is None:
    return None
  check_labels(spec, labels, setting)
  counts = np.asarray(counts, np.float64)
  if spec == BALANCED:
    missing = [label for label, n in zip(labels, counts) if n == 0]
    if missing:
      raise InputError(
          f"{setting}='balanced': label {missing[0]!r} has no {lacking}; "
          "give explicit weights or drop the label"
      )
    return balanced(counts).astype(np.float32)
  return np.array([spec.get(label, 1.0) for label in labels], np.float32)


def class_weights(
    spec: WeightSpec, labels: Sequence[str], counts: Sequence[int], setting
) -> Optional[np.ndarray]:
  """[C] float32 weights of the classes `labels` (with `counts` training
  examples each), or None when `spec` is None."""
  return _weights(
      spec,
      labels,
      counts,
      setting,
      lambda n: n.sum() / (len(labels) * n),
      "training examples",
  )


def positive_weights(
    spec: WeightSpec,
    labels: Sequence[str],
    positives: Sequence[int],
    examples: int,
    setting: str,
) -> Optional[np.ndarray]:
  """[L] float32 positive weights of multi-label `labels` (`positives`
  texts with each, of `examples`), or None when `spec` is None."""
  return _weights(
      spec,
      labels,
      positives,
      setting,
      lambda n: (examples - n) / n,
      "positive training example",
  )


def label_weights(labels: tf.Tensor, weights: Optional[np.ndarray]):
  """float32 weight of each class index in `labels` (1 without `weights`);
  0 where a label is negative (an unlabelled position)."""
  labelled = tf.cast(labels >= 0, tf.float32)
  if weights is None:
    return labelled
  return tf.gather(tf.constant(weights), tf.maximum(labels, 0)) * labelled


def softmax_loss(
    labels: tf.Tensor,
    logits: tf.Tensor,
    weights: Optional[np.ndarray],
    gamma: float,
) -> tf.Tensor:
  """w_y (1 - p_y)^gamma CE, shaped like `labels` (class indices; negative:
  unlabelled, 0); logits [..., C]. The loss is the sum of these over the
  global batch divided by that of `label_weights`."""
  logits = tf.cast(logits, tf.float32)
  log_p = tf.nn.log_softmax(logits, axis=-1)
  log_p_y = tf.gather(
      log_p, tf.maximum(labels, 0), batch_dims=labels.shape.rank
  )
  terms = -log_p_y
  if gamma:
    terms *= tf.pow(1.0 - tf.exp(log_p_y), gamma)
  return terms * label_weights(labels, weights)


def report(
    task: str,
    what: str,
    labels: Sequence[str],
    counts: Sequence[int],
    weights: Optional[np.ndarray],
    weight_key: str = "class_weights",
) -> Dict[str, list]:
  """Logs each label's training count (and weight); the facts the model
  directory records (`class_counts`, and `weight_key` when weighted)."""
  logging.info(
      "%s %s: %s",
      task,
      what,
      ", ".join(
          f"{label} {n}" + ("" if weights is None else f" (weight {w:.4g})")
          for label, n, w in zip(
              labels, counts, weights if weights is not None else counts
          )
      ),
  )
  facts = {"class_counts": [int(n) for n in counts]}
  if weights is not None:
    facts[weight_key] = [float(w) for w in weights]
  return facts


def sigmoid_loss(
    labels: tf.Tensor,
    logits: tf.Tensor,
    pos_weight: Optional[np.ndarray],
    gamma: float,
) -> tf.Tensor:
  """[B, L] each label's binary cross-entropy, its positive term times
  `pos_weight` and each term times (1 - p_t)^gamma."""
  logits = tf.cast(logits, tf.float32)
  log_p = tf.math.log_sigmoid(logits)  # log P(label)
  log_q = tf.math.log_sigmoid(-logits)  # log P(not label)
  positive = -labels * log_p
  negative = -(1.0 - labels) * log_q
  if gamma:
    positive *= tf.pow(1.0 - tf.exp(log_p), gamma)
    negative *= tf.pow(1.0 - tf.exp(log_q), gamma)
  if pos_weight is not None:
    positive *= tf.constant(pos_weight)
  return positive + negative
