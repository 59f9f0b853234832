"""`SquadTask`: SQuAD v1.1 and v2.0 extractive question answering.

docs/reference.md section 6: contexts longer than `seq_length` are covered by
windows `doc_stride` tokens apart (`squad_features.py`); v1.1 trains BERT's span
head and v2.0 the XLNet-style head of the original ALBERT (`squad_heads.py`);
answers are decoded over all windows of a question (`squad_postprocess.py`) and
scored with the official evaluation scripts (`squad_metrics.py`).

Files in `data_dir` keep their download names: `train-v1.1.json`,
`dev-v1.1.json` (v2.0: `train-v2.0.json`, `dev-v2.0.json`). The official
test sets are hidden, so `predict` writes the dev predictions.
"""

import os
from typing import List, Optional

from absl import logging
import gin
import tensorflow as tf
import tf_keras

from albert.finetuning.squad import data as squad_data
from albert.modeling import squad_heads
from albert.finetuning.squad import metrics as squad_metrics
from albert.finetuning.squad import postprocess as squad_postprocess
from albert.finetuning.finetune_task import FinetuneTask
from albert.finetuning.squad.features import SquadFeaturizer
from albert.modeling.squad import VERSIONS, AlbertSquadModel
from albert.finetuning.squad.serving import SquadServingModule
from albert.finetuning.task_state import TaskState

_WINDOW_KEYS = (
    "input_word_ids",
    "input_mask",
    "input_type_ids",
    "paragraph_mask",
)
_LABEL_KEYS = ("start_position", "end_position", "is_impossible")


@gin.configurable
class SquadTask(FinetuneTask):
  """SQuAD with `AlbertSquadModel`.

  Args:
    version: "1.1" or "2.0".
    doc_stride: tokens between the starts of consecutive context windows.
    max_query_length: question tokens kept.
    n_best_size: candidate answers kept per question.
    max_answer_length: longest answer, in tokens.
    null_score_diff_threshold: v2.0: a question is answered "" when its null
      odds reach this (`>=`, as the original); None = the best threshold on
      the split's gold answers (the official `best_f1_thresh`), logged, and
      0.0 where there is no gold.
      The serving SavedModel uses this threshold; when None, the one the
      last evaluation found (in this process, or `dev/null_threshold` of
      MODEL_DIR/eval_results.json), else 0.0.
    context_mask: v1.1: mask the span logits to the context and [CLS] as the
      v2.0 head does; False (the default): the original `create_v1_model`'s
      unmasked head (docs/experiments.md measures both).
    **kwargs: `FinetuneTask` arguments (`dropout_rate` is the v2.0
      answerability dropout).
  """

  main_metric = "f1"
  train_split = "train"
  eval_splits = ("dev",)
  predict_splits = ("dev",)

  def __init__(
      self,
      *,
      version: str = "1.1",
      doc_stride: int = 128,
      max_query_length: int = 64,
      n_best_size: int = 20,
      max_answer_length: int = 30,
      null_score_diff_threshold: Optional[float] = None,
      context_mask: bool = False,
      **kwargs,
  ):
    super().__init__(**kwargs)
    if version not in VERSIONS:
      raise ValueError(
          f"SquadTask.version={version!r} must be one of {VERSIONS}"
      )
    if not 0 < max_query_length <= self.seq_length - 4:
      raise ValueError(
          f"SquadTask.max_query_length={max_query_length} must be "
          f"in [1, seq_length - 4 = {self.seq_length - 4}]"
      )
    if doc_stride < 1:
      raise ValueError(f"SquadTask.doc_stride={doc_stride} must be >= 1")
    self.version = version
    self.name = f"squad_v{version}"
    self.doc_stride = doc_stride
    self.max_query_length = max_query_length
    self.n_best_size = n_best_size
    self.max_answer_length = max_answer_length
    self.null_score_diff_threshold = null_score_diff_threshold
    self.context_mask = context_mask
    self.postprocessor = squad_postprocess.SquadPostprocessor(
        n_best_size=n_best_size, max_answer_length=max_answer_length
    )
    self.serving_threshold = (
        null_score_diff_threshold
        if null_score_diff_threshold is not None
        else 0.0
    )

  def use_state(self, state: TaskState) -> None:
    """Serving takes the dev-chosen null threshold of an earlier evaluation."""
    found = (state.dev_choices or {}).get("dev/null_threshold")
    if self.null_score_diff_threshold is None and found is not None:
      self.serving_threshold = float(found)

  # --- Data -------------------------------------------------------------------

  def read_examples(self, split):
    path = os.path.join(
        self._require_data_dir(), f"{split}-v{self.version}.json"
    )
    return squad_data.read_squad_examples(
        path, training=split == self.train_split
    )

  def feature_options(self):
    return {
        "version": self.version,
        "doc_stride": self.doc_stride,
        "max_query_length": self.max_query_length,
    }

  def feature_spec(self):
    window = {
        k: tf.TensorSpec([self.seq_length], tf.int32) for k in _WINDOW_KEYS
    }
    return {**window, **{k: tf.TensorSpec([], tf.int32) for k in _LABEL_KEYS}}

  def featurize(self, examples, *, training):
    """Window dicts; `squad_feature` keeps the `SquadFeature` metadata."""
    del training  # Labels are set wherever the examples have spans.
    featurizer = SquadFeaturizer(
        self.tokenizer,
        seq_length=self.seq_length,
        doc_stride=self.doc_stride,
        max_query_length=self.max_query_length,
    )
    for feature in featurizer.featurize(examples):
      yield {
          **{k: getattr(feature, k) for k in _WINDOW_KEYS + _LABEL_KEYS},
          "squad_feature": feature,
      }

  # --- Model, loss, training metrics ------------------------------------------

  def build_task_model(self) -> AlbertSquadModel:
    return AlbertSquadModel.from_config_object(
        self.config,
        version=self.version,
        dropout_rate=self.dropout_rate,
        context_mask=self.context_mask,
    )

  def loss_totals(self, batch):
    return {
        "examples": tf.cast(tf.shape(batch["input_word_ids"])[0], tf.float32)
    }

  def _per_example_loss(self, outputs, batch) -> tf.Tensor:
    """[B] (start CE + end CE) / 2 (+ 0.5 answerability CE for v2.0)."""
    if self.version == "2.0":
      return squad_heads.squad_v2_loss(
          outputs["start_logits"],
          outputs["end_logits"],
          outputs["cls_logits"],
          batch["start_position"],
          batch["end_position"],
          batch["is_impossible"],
      )
    return squad_heads.span_loss(
        outputs["start_logits"],
        outputs["end_logits"],
        batch["start_position"],
        batch["end_position"],
    )

  def compute_loss(self, outputs, batch, totals):
    """Sum over this batch / windows in the global batch (task.py)."""
    return {
        "loss": tf.reduce_sum(self._per_example_loss(outputs, batch))
        / totals["examples"]
    }

  def build_metrics(self) -> List[tf_keras.metrics.Metric]:
    metrics = [
        tf_keras.metrics.SparseCategoricalAccuracy(name="start_accuracy"),
        tf_keras.metrics.SparseCategoricalAccuracy(name="end_accuracy"),
        tf_keras.metrics.Mean(name="span_loss"),
    ]
    if self.version == "2.0":
      metrics.append(
          tf_keras.metrics.BinaryAccuracy(
              name="answerability_accuracy", threshold=0.0
          )
      )
    return metrics

  def update_metrics(self, metrics, outputs, batch, losses=None):
    del losses  # Its per-example terms are cheap to recompute.
    by_name = {m.name: m for m in metrics}
    by_name["start_accuracy"].update_state(
        batch["start_position"], outputs["start_logits"]
    )
    if "end_logits" in outputs:  # v2.0 inference has a beam instead.
      by_name["end_accuracy"].update_state(
          batch["end_position"], outputs["end_logits"]
      )
      by_name["span_loss"].update_state(
          squad_heads.span_loss(
              outputs["start_logits"],
              outputs["end_logits"],
              batch["start_position"],
              batch["end_position"],
          )
      )
    if "answerability_accuracy" in by_name:
      by_name["answerability_accuracy"].update_state(
          batch["is_impossible"], outputs["cls_logits"]
      )

  # --- Decoding, official metrics, files --------------------------------------

  def _decode(self, examples, features, outputs):
    """(predictions with the null threshold applied, nbest, null_odds, raw
    predictions, threshold used)."""
    squad_features = [f["squad_feature"] for f in features]
    results = {
        f.unique_id: {k: v[i] for k, v in outputs.items()}
        for i, f in enumerate(squad_features)
    }
    raw, nbest, odds = self.postprocessor(examples, squad_features, results)
    if self.version == "1.1":
      return raw, nbest, None, raw, None
    threshold = self.null_score_diff_threshold
    if threshold is None:
      threshold = 0.0
      if any(e.answer_texts for e in examples):
        gold = squad_data.gold_answers(examples)
        threshold = squad_metrics.evaluate_v2(gold, raw, odds)["best_f1_thresh"]
      logging.info(
          "%s: null odds threshold %.4f (best F1 on these gold answers)",
          self.name,
          threshold,
      )
      self.serving_threshold = threshold
    return (
        squad_postprocess.apply_null_threshold(raw, odds, threshold),
        nbest,
        odds,
        raw,
        threshold,
    )

  def evaluate_outputs(self, split, examples, features, outputs):
    """v1.1: `exact_match`, `f1`. v2.0: the original's headline figures
    (`squad_metrics.evaluate_v2_original`: predictions.json scored with the
    null odds at the script's 1.0), `best_*` from the raw predictions and
    the null odds, and `null_threshold`."""
    gold = squad_data.gold_answers(examples)
    predictions, _, odds, raw, threshold = self._decode(
        examples, features, outputs
    )
    if self.version == "1.1":
      return squad_metrics.evaluate_v1(gold, predictions)
    metrics = squad_metrics.evaluate_v2_original(gold, raw, odds, threshold)
    return {k: float(v) for k, v in metrics.items()}

  def write_predictions(self, split, examples, features, outputs, output_dir):
    """predictions.json, nbest_predictions.json (+ null_odds.json for v2.0)."""
    predictions, nbest, odds, _, _ = self._decode(examples, features, outputs)
    return squad_postprocess.write_prediction_files(
        output_dir, predictions, nbest, odds
    )

  def serving_module(self, model, preprocessor) -> SquadServingModule:
    return SquadServingModule(
        model,
        preprocessor,
        max_query_length=self.max_query_length,
        max_answer_length=self.max_answer_length,
        doc_stride=self.doc_stride,
        null_threshold=self.serving_threshold,
    )
