"""`SentenceClassificationTask`: what GLUE and own-data sentence tasks share.

The original `run_classifier.py` (docs/reference.md section 6): a sentence or
sentence pair packed as `[CLS] a [SEP] (b [SEP])`, the pooled output, dropout
0.1 and one dense layer (`AlbertClassifier`); cross-entropy, or squared error
on one output for regression (STS-B); and the raw-text serving module with
the original export's `tf_example` signature.
"""

from typing import Dict, List, Optional, Sequence, Tuple

from absl import logging
import numpy as np
import tensorflow as tf

from albert.features import RECORD_TO_MODEL
from albert.modeling.classifier import AlbertClassifier
from albert.serving.preprocessor import Preprocessor
from albert.finetuning import long_text
from albert.finetuning.classification_task import ClassificationTask
from albert.finetuning.packing import packed_input_spec
from official.core import export_base

# The inputs of the original classifier export's tf.Examples.
ORIGINAL_INPUTS = ("input_ids", "input_mask", "segment_ids")


def truncate_pair(first: List[int], second: List[int], budget: int):
  """The original's `_truncate_seq_pair`: drop the last token of the longer
  segment (of `second` on ties) until both fit in `budget`.

  Computed in closed form: the result equals TF-Text's `RoundRobinTrimmer`,
  which the serving SavedModel uses.
  """
  keep_first = min(len(first), max(budget - len(second), (budget + 1) // 2))
  keep_second = min(len(second), budget - keep_first)
  return first[:keep_first], second[:keep_second]


class SentenceClassificationTask(ClassificationTask):
  """A sentence (or sentence-pair) classifier or regressor: the original
  `run_classifier.py` features, head and serving, for GLUE and own data.

  Subclasses set `labels` (the label strings, class index = position; None
  for regression), `is_regression` and `pair` before features are made.
  """

  labels: Optional[Tuple[str, ...]] = None
  pair: bool = False
  # `long_text.Windows` to read long single texts in windows (own data);
  # None: truncate. Windows are aggregated with `aggregation`, the logits
  # read as `activation` says (`long_text.ACTIVATIONS`).
  windows: Optional[long_text.Windows] = None
  aggregation: str = "mean_logits"
  activation: str = "softmax"
  # Argument names of the serving signature.
  serving_inputs: Tuple[str, str] = ("text_a", "text_b")

  @property
  def num_classes(self) -> int:
    return 1 if self.is_regression else len(self.labels)

  def feature_spec(self):
    return {
        **packed_input_spec(self.seq_length),
        "label": tf.TensorSpec(
            [], tf.float32 if self.is_regression else tf.int32
        ),
    }

  def _label(self, label) -> float:
    if label is None:  # test sets
      return 0.0 if self.is_regression else -1
    if self.is_regression:
      return float(label)
    return self.labels.index(label)

  def featurize(self, examples, *, training):
    """One feature per example, or one per window of a long single text
    (`windows`); each carries `document`, its example's index."""
    del training  # the same features for training and prediction
    tok = self.tokenizer
    length = self.seq_length - 2
    cut = 0
    for document, example in enumerate(examples):
      first = tok.tokenize(example.text_a)
      if example.text_b is not None:
        parts = [
            truncate_pair(
                first, tok.tokenize(example.text_b), self.seq_length - 3
            )
        ]
      elif self.windows is None:
        cut += len(first) > length
        parts = [(first[:length],)]
      else:
        windows = self.windows.split(first)
        cut += self.windows.reach(len(first)) < len(first)
        parts = [(window,) for window in windows]
      for part in parts:
        feature = self.pack(*part)
        feature["label"] = self._label(example.label)
        feature["document"] = document
        yield feature
    if cut:
      logging.warning(
          "%s: %d of %d texts are longer than %s; their end is not read",
          self.name,
          cut,
          len(examples),
          "the model reads"
          if self.windows is None
          else f"{self.windows.max_windows} windows",
      )

  def build_task_model(self):
    return AlbertClassifier.from_config_object(
        self.config,
        num_classes=self.num_classes,
        dropout_rate=self.dropout_rate,
    )

  def _predictions(self, outputs) -> np.ndarray:
    """Class indices [N], or scores [N] for regression."""
    if self.is_regression:
      return outputs["logits"][:, 0]
    return np.argmax(outputs["logits"], axis=-1)

  def serving_module(self, model, preprocessor):
    return GlueServingModule(
        model,
        preprocessor,
        labels=None if self.is_regression else self.labels,
        pair=self.pair,
        input_names=self.serving_inputs,
        windows=self.windows,
        aggregation=self.aggregation,
    )


_TEXT = tf.TensorSpec([None], tf.string)


def text_signature(
    input_names: Tuple[str, str], pair: bool
) -> List[tf.TensorSpec]:
  """The string [B] inputs of a raw-text signature: the first of
  `input_names`, and the second for sentence pairs."""
  first, second = input_names
  return [
      tf.TensorSpec([None], tf.string, name=n)
      for n in ((first, second) if pair else (first,))
  ]


class GlueServingModule(export_base.ExportModule):
  """Raw-text classification (or regression) for one GLUE or own-data task.

  Signature `serving_default`, on `text_a` [B] (and `text_b` [B] for
  sentence-pair tasks; `input_names` renames them, e.g. `text`, `text_pair`):
    classification -> `probabilities` float32 [B, C], `label_id` int32 [B],
      `label` string [B] (the task's label names);
    regression (STS-B) -> `score` float32 [B];
    with `windows` (single long texts read in windows, `long_text.py`) also
    `num_windows` int32 [B], the answer being the windows' aggregate.
  Signature `tf_example`, as the original `run_classifier.py` export: `examples`
  string [B] of serialized tf.Examples with int64 `input_ids`, `input_mask`,
  `segment_ids` of length seq_length -> `probabilities` [B, C] and
  `predictions` int32 [B] (regression: only `predictions`, float32 scores).
  """

  def __init__(
      self,
      model: AlbertClassifier,
      preprocessor: Preprocessor,
      *,
      labels: Optional[Sequence[str]],
      pair: bool,
      input_names: Tuple[str, str] = ("text_a", "text_b"),
      windows: Optional[long_text.Windows] = None,
      aggregation: str = "mean_logits",
      name: str = "glue_serving",
  ):
    super().__init__(model, name=name)
    self.preprocessor = preprocessor
    self.labels = tuple(labels) if labels else None
    self.windows = windows
    self.aggregation = aggregation
    self._serve = tf.function(
        self._outputs,
        input_signature=text_signature(input_names, pair),
        autograph=False,
    )
    self._serve_examples = tf.function(
        self._example_outputs, input_signature=[_TEXT], autograph=False
    )

  def _outputs(self, text_a, text_b=None) -> Dict[str, tf.Tensor]:
    logits, extra = long_text.text_logits(  # [B, C]
        self.model,
        self.preprocessor,
        text_a,
        text_b,
        self.windows,
        self.aggregation,
        "identity" if self.labels is None else "softmax",
    )
    if self.labels is None:
      return {"score": logits[:, 0], **extra}
    label_id = tf.argmax(logits, axis=-1, output_type=tf.int32)
    return {
        "probabilities": tf.nn.softmax(logits, axis=-1),
        "label_id": label_id,
        "label": tf.gather(tf.constant(self.labels), label_id),
        **extra,
    }

  def _example_outputs(self, examples) -> Dict[str, tf.Tensor]:
    length = self.preprocessor.seq_length
    parsed = tf.io.parse_example(
        examples,
        {
            name: tf.io.FixedLenFeature([length], tf.int64)
            for name in ORIGINAL_INPUTS
        },
    )
    # The original record names, translated by the one table that has them.
    inputs = {RECORD_TO_MODEL[name]: parsed[name] for name in ORIGINAL_INPUTS}
    # Cut after the batch's longest example (the preprocessor's dynamic
    # length): padding past it changes no output.
    inputs = self.preprocessor.trim_to_longest(inputs)
    logits = self.model(inputs, training=False)["logits"]  # [B, C]
    if self.labels is None:
      return {"predictions": logits[:, 0]}
    return {
        "probabilities": tf.nn.softmax(logits, axis=-1),
        "predictions": tf.argmax(logits, axis=-1, output_type=tf.int32),
    }

  def signatures(self):
    return {"serving_default": self._serve, "tf_example": self._serve_examples}
