"""Multi-label classification of the user's texts: any number of labels each.

`gin/finetune/text_multilabel.gin` selects `TextMultiLabelTask`. The files
are those of text classification (`albert/finetuning/own_data/reader.py`); the
label column holds a set of labels:

  JSON Lines  a list of strings, `["sports", "politics"]`; `[]`: no label.
  CSV / TSV   one string with the labels separated by `label_delimiter`
              (`|` by default): `sports|politics`; an empty field: no label.
              A label name cannot contain the delimiter (a listed label that
              does is refused); in JSON lists any name works.

Surrounding spaces are stripped and a label named twice in a row counts
once. A text without labels is a valid example (its right answer is "none of
them"). The label set is `labels`, else every label of the training file,
sorted, saved in MODEL_DIR/labels.json. A dev or test label outside the set
is refused in one line.

The model is the sentence classifier with one logit per label, trained with
sigmoid cross-entropy (the mean over labels of each label's binary
cross-entropy); a label is predicted when its probability reaches its
threshold. Each evaluation tunes the per-label thresholds for the metric
that selects the best checkpoint (`main_metric`, micro-F1 by default;
`multilabel_metrics.tune_thresholds`: coordinate ascent from 0.5, never
below the 0.5 value) and reports micro-F1, macro-F1 and subset accuracy at
those thresholds (optimistic, being tuned on the same dev set), the same
three at 0.5 (`micro_f1_at_0.5`, ...) and the thresholds
(`dev/threshold/<label>`). Predictions and the serving SavedModel use the
thresholds of the best checkpoint's evaluation (MODEL_DIR/eval_results.json),
or `threshold` for every label when it is set; the reported figures are
those of the thresholds served.
"""

from typing import Dict, Optional, Sequence, Tuple

import gin
import numpy as np
import tensorflow as tf
import tf_keras

from albert.finetuning import class_weights as weighting
from albert.finetuning import long_text
from albert.finetuning import multilabel_metrics
from albert.finetuning.own_data import text_classification
from albert.finetuning.sentence_classification import text_signature
from albert.finetuning.task_state import TaskState
from official.errors import InputError
from official.core import export_base

THRESHOLD_KEY = "threshold/"
# Beside each metric: its value with every threshold at 0.5.
AT_HALF = "_at_0.5"


@gin.configurable
class TextMultiLabelTask(text_classification.TextClassificationTask):
  """Texts (or text pairs) with any number of the user's labels.

  Args:
    label_delimiter: separates the labels of a CSV / TSV field.
    threshold: one probability threshold for every label; None: each
      label's threshold tuned on dev.
    main_metric: `micro_f1` (default), `macro_f1` or `subset_accuracy`.
    pos_weight: None, "balanced" (each label's negatives / positives in
      the training file) or a dict of label -> weight (others 1): the
      weight of each label's positive term in its cross-entropy.
    **kwargs: `TextClassificationTask` arguments (`labels`, columns,
      `focal_gamma`; not `class_weights`: the labels are not exclusive).
  """

  name = "text_multilabel"
  main_metric = "micro_f1"
  main_metrics = ("micro_f1", "macro_f1", "subset_accuracy")
  # transformers' config.json `problem_type` of this head.
  problem_type = "multi_label_classification"
  activation = "sigmoid"

  def __init__(
      self,
      *,
      label_delimiter: str = "|",
      threshold: Optional[float] = None,
      pos_weight: weighting.WeightSpec = None,
      **kwargs,
  ):
    if kwargs.get("class_weights") is not None:
      raise InputError(
          "TextMultiLabelTask.class_weights: a text may have several labels; "
          "weight each label's positives with TextMultiLabelTask.pos_weight"
      )
    super().__init__(**kwargs)
    weighting.check_spec(pos_weight, "TextMultiLabelTask.pos_weight")
    self.pos_weight = pos_weight
    self.pos_weight_vector = None  # [L] once the training file is counted
    if self.given_labels:
      weighting.check_labels(
          pos_weight, self.given_labels, "TextMultiLabelTask.pos_weight"
      )
    if not label_delimiter or label_delimiter.strip() != label_delimiter:
      raise InputError(
          f"TextMultiLabelTask.label_delimiter={label_delimiter!r} must be a "
          "non-empty string without surrounding spaces, e.g. '|'"
      )
    for label in self.given_labels:
      if label_delimiter in label:
        raise InputError(
            f"TextMultiLabelTask.labels: {label!r} contains the label "
            f"delimiter {label_delimiter!r}; choose another "
            "TextMultiLabelTask.label_delimiter"
        )
    if threshold is not None and not 0.0 < threshold < 1.0:
      raise InputError(
          f"TextMultiLabelTask.threshold={threshold} must be in (0, 1)"
      )
    self.label_delimiter = label_delimiter
    self.threshold = threshold
    self.thresholds = None  # [L] once an evaluation or eval_results has them

  # --- Reading ----------------------------------------------------------------

  def label_parser(self):
    return self._parse_labels

  def _parse_labels(self, path, number, value, labeled):
    """A row's label set as a tuple of names; None for a test row without
    the field."""
    column = self.columns.label
    if value is None:
      if not labeled:
        return None
      raise InputError(
          f"{path} line {number}: no {column!r} field; write [] (JSON) or "
          "an empty field for a text without labels"
      )
    if isinstance(value, list):
      names = []
      for item in value:
        if isinstance(item, (dict, list, bool)) or item is None:
          raise InputError(
              f"{path} line {number}: {column!r} holds {item!r}; list label "
              "names (strings)"
          )
        names.append(str(item).strip())
    elif isinstance(value, str):
      if not value.strip():
        return ()
      names = [name.strip() for name in value.split(self.label_delimiter)]
    else:
      raise InputError(
          f"{path} line {number}: {column!r} is a JSON "
          f"{type(value).__name__}; write a list of label names, or one "
          f"string of names separated by {self.label_delimiter!r}"
      )
    if any(not name for name in names):
      raise InputError(
          f"{path} line {number}: {column!r} = {value!r} has an empty label "
          f"name; separate names by one {self.label_delimiter!r} and leave "
          "the field empty for no label"
      )
    return tuple(dict.fromkeys(names))  # a name twice counts once

  # A training file with a single label name is a valid (binary) task.
  min_labels = 1

  @staticmethod
  def _names(example) -> Tuple[str, ...]:
    return example.label or ()

  # --- Features, loss, metrics ---------------------------------------------

  def feature_spec(self):
    spec = dict(super().feature_spec())
    spec["label"] = tf.TensorSpec([len(self.labels)], tf.float32)
    return spec

  def feature_options(self):
    return {**super().feature_options(), "multi_label": True}

  def _label(self, label) -> np.ndarray:
    """[L] multi-hot (zeros for a test row without labels)."""
    hot = np.zeros([len(self.labels)], np.float32)
    for name in label or ():
      hot[self.labels.index(name)] = 1.0
    return hot

  def _use_counts(self, counts, examples) -> None:
    """The positive weights of `counts` (each label's positive texts of
    `examples`); no class weights."""
    self.pos_weight_vector = weighting.positive_weights(
        self.pos_weight,
        self.labels,
        counts,
        examples,
        "TextMultiLabelTask.pos_weight",
    )
    self._weight_facts = weighting.report(
        self.name,
        f"training texts with each label (of {examples})",
        self.labels,
        counts,
        self.pos_weight_vector,
        weight_key="pos_weights",
    )

  def _weighted(self) -> bool:
    return False  # the weights are inside each label's binary loss

  def _per_example_loss(self, outputs, batch) -> tf.Tensor:
    """[B] the mean over labels of the sigmoid cross-entropy (positive
    terms times `pos_weight`, focal with `focal_gamma`)."""
    if self.pos_weight_vector is None and not self.focal_gamma:
      losses = tf.nn.sigmoid_cross_entropy_with_logits(
          labels=batch["label"], logits=outputs["logits"]
      )  # [B, L]
    else:
      losses = weighting.sigmoid_loss(
          batch["label"],
          outputs["logits"],
          self.pos_weight_vector,
          self.focal_gamma,
      )
    return tf.reduce_mean(losses, axis=-1)

  def build_metrics(self):
    return [
        tf_keras.metrics.BinaryAccuracy(name="label_accuracy", threshold=0.0),
        tf_keras.metrics.Mean(name="cross_entropy"),
    ]

  def update_metrics(self, metrics, outputs, batch, losses=None):
    del losses  # Its per-example terms are cheap to recompute.
    by_name = {m.name: m for m in metrics}
    by_name["label_accuracy"].update_state(batch["label"], outputs["logits"])
    by_name["cross_entropy"].update_state(
        self._per_example_loss(outputs, batch)
    )

  @staticmethod
  def probabilities(outputs) -> np.ndarray:
    """[N, L] sigmoid of the logits, in float64."""
    return 1.0 / (1.0 + np.exp(-outputs["logits"].astype(np.float64)))

  def evaluate_outputs(self, split, examples, features, outputs):
    """The metrics at the thresholds `predict` and the export use (tuned
    for `main_metric` on this split, or `threshold`), the same at 0.5
    beside them (`<metric>_at_0.5`), and each label's threshold."""
    gold = np.stack([f["label"] for f in features]) > 0.5  # [N, L]
    probabilities = self.probabilities(outputs)
    if self.threshold is None:
      thresholds = multilabel_metrics.tune_thresholds(
          probabilities, gold, self.main_metric
      )
      self.thresholds = thresholds
    else:
      thresholds = self.label_thresholds()
    chosen = probabilities >= thresholds
    metrics = multilabel_metrics.multilabel_metrics(chosen, gold)
    metrics.update(multilabel_metrics.per_label(chosen, gold, self.labels))
    at_half = multilabel_metrics.multilabel_metrics(probabilities >= 0.5, gold)
    metrics.update({f"{k}{AT_HALF}": v for k, v in at_half.items()})
    metrics.update(
        {
            f"{THRESHOLD_KEY}{n}": float(t)
            for n, t in zip(self.labels, thresholds)
        }
    )
    return metrics

  def use_state(self, state: TaskState) -> None:
    """Also the per-label thresholds of the best checkpoint's evaluation."""
    super().use_state(state)
    results = state.dev_choices
    if results is None:
      return
    split = self.eval_splits[0]
    found = [results.get(f"{split}/{THRESHOLD_KEY}{n}") for n in self.labels]
    if all(t is not None for t in found):
      self.thresholds = np.asarray(found, np.float64)

  def label_thresholds(self) -> np.ndarray:
    """[L] the thresholds predictions and serving use."""
    if self.threshold is not None:
      return np.full([len(self.labels)], self.threshold)
    if self.thresholds is not None:
      return np.asarray(self.thresholds, np.float64)
    return np.full([len(self.labels)], 0.5)

  # --- Outputs -------------------------------------------------------------

  def write_predictions(self, split, examples, features, outputs, output_dir):
    probabilities = self.probabilities(outputs)
    chosen = probabilities >= self.label_thresholds()  # [N, L]
    jsonl = self._split_file(split).endswith((".jsonl", ".json"))
    header = ["id", "labels"] + [f"p_{label}" for label in self.labels]
    rows = []
    for example, p, row_chosen in zip(examples, probabilities, chosen):
      names = [n for n, c in zip(self.labels, row_chosen) if c]
      rows.append(
          [example.guid, names if jsonl else self.label_delimiter.join(names)]
          + [round(float(v), 6) for v in p]
      )
    return [self._write_rows(split, header, rows, output_dir)]

  def serving_module(self, model, preprocessor):
    return MultiLabelServingModule(
        model,
        preprocessor,
        labels=self.labels,
        thresholds=self.label_thresholds(),
        pair=self.pair,
        input_names=self.serving_inputs,
        windows=self.windows,
        aggregation=self.aggregation,
    )


class MultiLabelServingModule(export_base.ExportModule):
  """Raw-text multi-label classification.

  Signature `serving_default`, on `text` [B] (and `text_pair` [B] for pairs):
    `probabilities` float32 [B, L]: every label's probability, in label
      order;
    `labels` string [B, L]: the labels whose probability reaches their
      threshold, most probable first, then "" up to L;
    `label_probabilities` float32 [B, L]: their probabilities (0 after);
    `num_labels` int32 [B]: how many labels each text has;
    with `windows` also `num_windows` int32 [B] (`long_text.py`).
  """

  def __init__(
      self,
      model,
      preprocessor,
      *,
      labels: Sequence[str],
      thresholds: Sequence[float],
      pair: bool,
      input_names: Tuple[str, str] = ("text", "text_pair"),
      windows: Optional[long_text.Windows] = None,
      aggregation: str = "mean_logits",
      name: str = "multilabel_serving",
  ):
    super().__init__(model, name=name)
    self.preprocessor = preprocessor
    self.windows = windows
    self.aggregation = aggregation
    self.labels = tf.constant(list(labels))
    self.thresholds = tf.constant(np.asarray(thresholds, np.float32))
    self._serve = tf.function(
        self._outputs,
        input_signature=text_signature(input_names, pair),
        autograph=False,
    )

  def _outputs(self, text_a, text_b=None) -> Dict[str, tf.Tensor]:
    logits, extra = long_text.text_logits(  # [B, L]
        self.model,
        self.preprocessor,
        text_a,
        text_b,
        self.windows,
        self.aggregation,
        "sigmoid",
    )
    probabilities = tf.sigmoid(tf.cast(logits, tf.float32))
    chosen = probabilities >= self.thresholds  # [B, L]
    # Chosen labels first, each group by probability (which is in [0, 1]).
    key = probabilities + 2.0 * tf.cast(chosen, tf.float32)
    order = tf.argsort(key, axis=-1, direction="DESCENDING")  # [B, L]
    chosen_sorted = tf.gather(chosen, order, batch_dims=1)
    return {
        "probabilities": probabilities,
        "labels": tf.where(chosen_sorted, tf.gather(self.labels, order), ""),
        "label_probabilities": tf.where(
            chosen_sorted, tf.gather(probabilities, order, batch_dims=1), 0.0
        ),
        "num_labels": tf.reduce_sum(tf.cast(chosen, tf.int32), axis=-1),
        **extra,
    }

  def signatures(self):
    return {"serving_default": self._serve}
