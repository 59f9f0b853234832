"""Fine-tuning on the user's own data: text classification and regression.

`gin/finetune/text_classification.gin` and `gin/finetune/text_regression.gin`
select these tasks. `DATA_DIR` holds `train`, `dev` and (optionally) `test`
as CSV, TSV or JSON Lines (`own_data/reader.py`); the model, features and
serving are GLUE's (`albert/finetuning/sentence_classification.py`).

The label set is `TextClassificationTask.labels` when given, else every
label of the training file, sorted. It is saved in MODEL_DIR/labels.json
with the first checkpoint, so that eval, predict and export read it back
without the training file, and a resumed run with other labels is refused.
"""

from typing import Any, Dict, List, Optional, Sequence, Tuple

import gin
import numpy as np

from albert.finetuning import class_weights as weighting
from albert.finetuning import classification_metrics
from albert.finetuning import long_text as long_text_lib
from albert.finetuning.task_state import TaskState
from albert.finetuning.own_data import reader as own_data
from albert.finetuning.sentence_classification import SentenceClassificationTask
from official.errors import InputError


class OwnDataTask(SentenceClassificationTask):
  """Shared by classification and regression on own files.

  Args:
    text_column: the column with the text.
    text_pair_column: the column with the second text of sentence pairs
      (pairs are used when the training file has it).
    label_column: the column with the label.
    id_column: the column naming rows in prediction files (else the row
      number, from 0).
    main_metric: the metric that picks the best checkpoint and seed.
    long_text: 'truncate' (read the first seq_length - 2 pieces) or
      'windows' (read single texts in overlapping windows and answer per
      text: `albert/finetuning/long_text.py`); None: what the model
      directory was trained with (MODEL_DIR/labels.json), else 'truncate'.
    window_stride: pieces from one window's start to the next; None: the
      model directory's, else half a window.
    max_windows: the most windows read from one text (its first ones);
      None: the model directory's, else 16.
    aggregation: 'mean_logits' or 'max_probability': how a text's windows
      make its answer; None: the model directory's, else 'mean_logits'.
      Each setting given replaces the model directory's.
    **kwargs: `FinetuneTask` arguments.

  In training every window is an example with its text's label; dev
  metrics, the best-checkpoint choice, prediction files and the exported
  SavedModel (which windows in the graph and returns `num_windows`) answer
  per text.
  """

  serving_inputs = ("text", "text_pair")
  # What may pick the best checkpoint and seed (higher is better).
  main_metrics = ("accuracy", "macro_f1")

  def __init__(
      self,
      *,
      text_column: str = "text",
      text_pair_column: str = "text_pair",
      label_column: str = "label",
      id_column: str = "id",
      main_metric: Optional[str] = None,
      long_text: Optional[str] = None,
      window_stride: Optional[int] = None,
      max_windows: Optional[int] = None,
      aggregation: Optional[str] = None,
      **kwargs,
  ):
    super().__init__(**kwargs)
    self.long_text = long_text_lib.LongText(
        type(self).__name__,
        long_text=long_text,
        window_stride=window_stride,
        max_windows=max_windows,
        aggregation=aggregation,
        seq_length=self.seq_length,
        activation=self.activation,
    )
    self.columns = own_data.Columns(
        text=text_column,
        text_pair=text_pair_column,
        label=label_column,
        id=id_column,
    )
    if main_metric is not None:
      if main_metric not in self.main_metrics:
        raise InputError(
            f"{type(self).__name__}.main_metric={main_metric!r} is not one "
            f"of {', '.join(self.main_metrics)}"
        )
      self.main_metric = main_metric
    self.pair = None  # decided by the training file or MODEL_DIR/labels.json

  @property
  def windows(self):
    return self.long_text.windows

  @property
  def aggregation(self) -> str:
    return self.long_text.aggregation

  @property
  def epoch_size(self) -> int:
    """With windows, an epoch is every window once."""
    if self.windows is None:
      return super().epoch_size
    return self.prepare_training_data()

  def predict(self, model, split, runner=None):
    """Per text: with windows, each text's windows aggregated
    (`long_text.aggregate`) into its `logits`, with `num_windows`; the
    features are each text's first window's."""
    examples, features, outputs = super().predict(model, split, runner)
    if self.windows is None:
      return examples, features, outputs
    document = np.array([f["document"] for f in features])
    _, first = np.unique(document, return_index=True)
    logits = long_text_lib.aggregate(
        outputs["logits"],
        document,
        len(examples),
        self.aggregation,
        self.activation,
    )
    return (
        examples,
        [features[i] for i in first],
        {
            "logits": logits,
            "num_windows": np.bincount(document, minlength=len(examples)),
        },
    )

  # --- Files ------------------------------------------------------------------

  def _split_file(self, split: str) -> str:
    return own_data.require_split_file(
        self._require_data_dir(),
        split,
        task=self.name,
        hint=f"put the {split} examples there",
    )

  def read_examples(self, split):
    if self.pair is None and split != self.train_split:
      self.read_examples(self.train_split)  # the training file decides
    path = self._split_file(split)
    examples, pair = own_data.read_text_examples(
        path,
        self.columns,
        pair=self.pair,
        labeled=split != "test",
        regression=self.is_regression,
        label_parser=self.label_parser(),
    )
    self.pair = pair
    if pair and self.windows is not None:
      raise InputError(
          f"{path}: long_text='windows' reads single texts, and this file "
          f"has a {self.columns.text_pair!r} column; use long_text='truncate' "
          "for text pairs"
      )
    self._check_labels(path, split, examples)
    return examples

  def label_parser(self):
    """Hook: a `reader.read_text_examples` label parser, or None for one
    label string (a number for regression) per row."""
    return None

  def _check_labels(self, path, split, examples) -> None:
    """Hook: classification fixes and checks its label set here."""

  def predict_to_files(self, model, output_dir: str, runner=None) -> List[str]:
    for split in self.predict_splits:
      self._split_file(split)  # one line, before any output, if it is missing
    return super().predict_to_files(model, output_dir, runner)

  # --- MODEL_DIR/labels.json --------------------------------------------------

  def saved_facts(self) -> Dict[str, Any]:
    return dict(
        labels=None if self.is_regression else list(self.labels),
        text_pair=bool(self.pair),
        long_text=self.long_text.facts(),
    )

  def use_state(self, state: TaskState) -> None:
    """The label set and whether inputs are pairs, from MODEL_DIR/labels.json
    (or, before building a model without training, the training file)."""
    found = state.read_facts(self.name)
    if found is not None:
      path, saved = found
      self.pair = bool(saved.get("text_pair"))
      self.long_text.adopt(path, saved.get("long_text"))
      if self.pair and self.windows is not None:
        raise InputError(
            f"{path}: the model reads text pairs, and long_text='windows' "
            f"reads single texts; leave {type(self).__name__}.long_text unset"
        )
      if not self.is_regression:
        self._use_saved_labels(path, tuple(saved.get("labels") or ()))
    if state.for_model:
      self._require_model_facts(state)

  def _use_saved_labels(self, path, labels) -> None:
    del path, labels

  def _require_model_facts(self, state: TaskState) -> None:
    if self.pair is None or (not self.is_regression and self.labels is None):
      if self.data_dir and own_data.find_split_file(
          self.data_dir, self.train_split
      ):
        self.read_examples(self.train_split)
      else:
        raise InputError(
            f"{self.name}: "
            f"{state.facts_path} is missing "
            "and there is no training file in --data_dir to take the labels "
            "from; point --model_dir at a directory this task trained"
        )

  # --- Outputs ----------------------------------------------------------------

  def _write_rows(self, split, header, rows, output_dir) -> str:
    """Prediction rows in the format of the split's input file."""
    return own_data.write_rows(
        self._split_file(split), split, header, rows, output_dir
    )


@gin.configurable
class TextClassificationTask(OwnDataTask):
  """Classification of texts (or text pairs) into the user's labels.

  Args:
    labels: the label strings, in class order; None: every label of the
      training file, sorted.
    class_weights: None, "balanced" (scikit-learn's: N / (C x count)) or a
      dict of label -> weight (others 1); `class_weights.py`.
    focal_gamma: > 0: the focal loss with this exponent.
    **kwargs: `OwnDataTask` arguments.

  Metrics: accuracy and macro-F1 (the mean of each class's F1), and each
  class's precision, recall and F1 and the confusion matrix
  (`confusion/<gold>/<predicted>`: counts).
  """

  name = "text_classification"
  main_metric = "accuracy"

  def __init__(
      self,
      *,
      labels: Optional[Sequence[str]] = None,
      class_weights: weighting.WeightSpec = None,
      focal_gamma: float = 0.0,
      **kwargs,
  ):
    super().__init__(**kwargs)
    cls = type(self).__name__
    weighting.check_spec(class_weights, f"{cls}.class_weights")
    weighting.check_gamma(focal_gamma, f"{cls}.focal_gamma")
    self.class_weights = class_weights
    self.focal_gamma = focal_gamma
    self._weight_facts = {}  # training counts and weights, for labels.json
    self.given_labels = tuple(str(label) for label in labels or ())
    if labels is not None and not self.given_labels:
      raise InputError(
          "TextClassificationTask.labels is empty; list the labels or leave "
          "it unset to take them from the training file"
      )
    if len(set(self.given_labels)) != len(self.given_labels):
      raise InputError(
          f"TextClassificationTask.labels={list(self.given_labels)} names a "
          "label twice"
      )
    self.labels = self.given_labels or None
    self._saved_labels = None
    if self.given_labels:
      weighting.check_labels(
          class_weights, self.given_labels, f"{cls}.class_weights"
      )

  def _use_saved_labels(self, path, labels) -> None:
    if self.given_labels and labels != self.given_labels:
      raise InputError(
          f"{path}: the model was trained on labels {list(labels)}, not "
          f"TextClassificationTask.labels={list(self.given_labels)}; use "
          "another --model_dir or the same labels"
      )
    self._saved_labels = labels
    self.labels = labels

  # The fewest labels the training file may have.
  min_labels = 2

  @staticmethod
  def _names(example) -> Tuple[str, ...]:
    """The label names of one example (none for a row without a label)."""
    return () if example.label is None else (example.label,)

  def _check_labels(self, path, split, examples) -> None:
    if split == self.train_split and not self.given_labels:
      from_file = tuple(sorted({n for e in examples for n in self._names(e)}))
      if len(from_file) < self.min_labels:
        raise InputError(
            f"{path}: {len(from_file)} distinct label(s); {self.name} needs "
            f"at least {self.min_labels}"
        )
      if self._saved_labels and from_file != self._saved_labels:
        raise InputError(
            f"{path}: labels {list(from_file)} differ from "
            f"{list(self._saved_labels)} the model in --model_dir was "
            "trained on; use another --model_dir"
        )
      self.labels = from_file
      return
    if self.labels is None:
      return  # checked against the training labels once they are known
    allowed = set(self.labels)
    for example in examples:
      for label in self._names(example):
        if label not in allowed:
          raise InputError(
              f"{path}: row {example.guid} has label {label!r}, not one of "
              f"the {len(self.labels)} labels {list(self.labels)[:10]}; fix "
              f"the row or list every label in {type(self).__name__}.labels"
          )

  def feature_options(self):
    return {
        "labels": list(self.labels),
        "pair": self.pair,
        **self.long_text.feature_options(),
    }

  def count_training_labels(self, examples) -> None:
    """Each label's training examples, and the weights from them."""
    counts = np.zeros([len(self.labels)], np.int64)
    for example in examples:
      for name in self._names(example):
        counts[self.labels.index(name)] += 1
    self._use_counts(counts, len(examples))

  def _use_counts(self, counts: np.ndarray, examples: int) -> None:
    """The class weights of `counts` (each label's training examples)."""
    del examples
    self.class_weight_vector = weighting.class_weights(
        self.class_weights,
        self.labels,
        counts,
        f"{type(self).__name__}.class_weights",
    )
    self._weight_facts = weighting.report(
        self.name,
        "training labels",
        self.labels,
        counts,
        self.class_weight_vector,
    )

  def saved_facts(self) -> Dict[str, Any]:
    return {**super().saved_facts(), **self._weight_facts}

  def evaluate_outputs(self, split, examples, features, outputs):
    labels = np.array([f["label"] for f in features])
    predictions = self._predictions(outputs)
    return {
        "accuracy": classification_metrics.accuracy(predictions, labels),
        "macro_f1": classification_metrics.macro_f1(predictions, labels),
        **classification_metrics.per_class(predictions, labels, self.labels),
    }

  def write_predictions(self, split, examples, features, outputs, output_dir):
    logits = outputs["logits"].astype(np.float64)
    probabilities = np.exp(logits - logits.max(-1, keepdims=True))
    probabilities /= probabilities.sum(-1, keepdims=True)
    header = ["id", "prediction"] + [f"p_{label}" for label in self.labels]
    rows = [
        [e.guid, self.labels[int(np.argmax(p))]]
        + [round(float(v), 6) for v in p]
        for e, p in zip(examples, probabilities)
    ]
    return [self._write_rows(split, header, rows, output_dir)]


@gin.configurable
class TextRegressionTask(OwnDataTask):
  """A numeric score for texts (or text pairs), learnt with squared error.

  Metrics: Pearson and Spearman correlation and their mean `corr` (which
  picks the best checkpoint), and the mean squared error.
  """

  name = "text_regression"
  problem_type = "regression"
  activation = "identity"
  main_metric = "corr"
  main_metrics = ("corr", "pearson", "spearman")
  is_regression = True

  def feature_options(self):
    return {"pair": self.pair, **self.long_text.feature_options()}

  def evaluate_outputs(self, split, examples, features, outputs):
    scores = self._predictions(outputs)
    labels = np.array([f["label"] for f in features], np.float64)
    pearson = classification_metrics.pearson(scores, labels)
    spearman = classification_metrics.spearman(scores, labels)
    return {
        "pearson": pearson,
        "spearman": spearman,
        "corr": (pearson + spearman) / 2,
        "mse": float(np.mean((scores - labels) ** 2)),
    }

  def write_predictions(self, split, examples, features, outputs, output_dir):
    scores = self._predictions(outputs)
    rows = [[e.guid, round(float(s), 6)] for e, s in zip(examples, scores)]
    return [self._write_rows(split, ["id", "prediction"], rows, output_dir)]
