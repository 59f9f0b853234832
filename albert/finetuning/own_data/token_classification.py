"""Token classification (named-entity tagging) on CoNLL-2003-style files.

`gin/finetune/token_classification.gin` selects `TokenClassificationTask`.
Each word is tokenised on its own; its tag is learnt and predicted on its
first SentencePiece piece (the convention of BERT's CoNLL-2003 experiment,
Devlin et al., 2019, section 5.3), the other pieces carry no label. A
sentence longer than `seq_length - 2` pieces keeps the words that fit; the
rest are predicted `O` (and counted by the metrics, so scores stay honest),
with a warning naming how many words were cut.

Metrics are entity-level precision, recall and F1 as `seqeval` computes
them (`own_data/entity_metrics.py`), plus per-type scores and the
accuracy over words. The tag set is saved in MODEL_DIR/labels.json.
"""

import os
import re
from typing import Any, Dict, List, Optional, Sequence

from absl import logging
import gin
import numpy as np
import tensorflow as tf
import tf_keras

from albert.finetuning import class_weights as weighting
from albert.finetuning import classification_metrics
from albert.finetuning import long_text as long_text_lib
from albert.finetuning.own_data import conll as conll_data
from albert.finetuning.own_data import entity_metrics
from albert.finetuning.own_data.token_serving import OUTSIDE
from albert.finetuning.own_data.token_serving import (
    TokenClassificationServingModule,
)
from albert.finetuning.task_state import TaskState
from albert.modeling.token_classifier import AlbertTokenClassifier
from albert.finetuning.finetune_task import FinetuneTask
from albert.finetuning.packing import packed_input_spec
from official.errors import InputError
from official.io import atomic_write

_TAG = re.compile(r"O|[BIES]-\S+")


@gin.configurable
class TokenClassificationTask(FinetuneTask):
  """Tags every word of CoNLL-style sentences (BIO / IOB2 tags).

  Args:
    labels: the tags, in class order; None: every tag of the training file,
      sorted.
    main_metric: what picks the best checkpoint and seed: `f1`, `precision`,
      `recall` (entity level) or `accuracy` (words).
    class_weights, focal_gamma: as `TextClassificationTask`'s, over the
      training file's words (`albert/finetuning/class_weights.py`).
    long_text: 'truncate' (the words whose pieces fit in seq_length - 2;
      the rest are tagged O) or 'windows' (every word, read in windows of
      pieces every `window_stride`, at most `max_windows` per sentence;
      `albert/finetuning/long_text.py`); None: the model directory's
      setting (MODEL_DIR/labels.json), else 'truncate'.
    window_stride: pieces from one window's start to the next; None: the
      model directory's, else half a window.
    max_windows: the most windows per sentence; None: the model's, else 16.
    **kwargs: `FinetuneTask` arguments.

  With windows, training labels every word whose first piece a window
  holds; a word's predicted tag comes from the window that gives its first
  piece the most context (BERT's rule, `long_text.is_max_context`), in
  evaluation, prediction files and the SavedModel alike.
  """

  name = "token_classification"
  main_metric = "f1"
  main_metrics = ("f1", "precision", "recall", "accuracy")

  def __init__(
      self,
      *,
      labels: Optional[Sequence[str]] = None,
      main_metric: str = "f1",
      class_weights: weighting.WeightSpec = None,
      focal_gamma: float = 0.0,
      long_text: Optional[str] = None,
      window_stride: Optional[int] = None,
      max_windows: Optional[int] = None,
      **kwargs,
  ):
    super().__init__(**kwargs)
    self.long_text = long_text_lib.LongText(
        "TokenClassificationTask",
        long_text=long_text,
        window_stride=window_stride,
        max_windows=max_windows,
        aggregation=None,
        seq_length=self.seq_length,
        activation="softmax",
        aggregates=False,
    )
    weighting.check_spec(class_weights, "TokenClassificationTask.class_weights")
    weighting.check_gamma(focal_gamma, "TokenClassificationTask.focal_gamma")
    self.class_weights = class_weights
    self.focal_gamma = focal_gamma
    self.class_weight_vector = None  # [C] once the training file is read
    self._weight_facts = {}  # its counts and weights, for labels.json
    if main_metric not in self.main_metrics:
      raise InputError(
          f"TokenClassificationTask.main_metric={main_metric!r} is not one "
          f"of {', '.join(self.main_metrics)}"
      )
    self.main_metric = main_metric
    self.given_labels = tuple(labels) if labels is not None else None
    if self.given_labels is not None:
      self._check_tags("TokenClassificationTask.labels", self.given_labels)
      weighting.check_labels(
          class_weights,
          self.given_labels,
          "TokenClassificationTask.class_weights",
      )
    self.labels = self.given_labels
    self._saved_labels = None

  # --- Data -------------------------------------------------------------------

  @staticmethod
  def _check_tags(where: str, tags) -> None:
    for tag in tags:
      if not _TAG.fullmatch(tag):
        raise InputError(
            f"{where}: tag {tag!r} is neither O nor B-/I-/E-/S- and a type; "
            "use BIO (IOB2) tags such as B-PER, I-PER, O"
        )

  def _split_file(self, split: str) -> str:
    return conll_data.require_split_file(
        self._require_data_dir(),
        split,
        task=self.name,
        hint=f"put the {split} sentences there (a word and its tag per line)",
    )

  def read_examples(self, split):
    if self.labels is None and split != self.train_split:
      self.read_examples(self.train_split)  # the training file decides
    path = self._split_file(split)
    sentences = conll_data.read_conll(
        path, tagged=True if split != "test" else None
    )
    tags = sorted({t for s in sentences if s.tags for t in s.tags})
    self._check_tags(path, tags)
    if split == self.train_split and self.given_labels is None:
      if self._saved_labels and tuple(tags) != self._saved_labels:
        raise InputError(
            f"{path}: tags {tags} differ from {list(self._saved_labels)} the "
            "model in --model_dir was trained on; use another --model_dir"
        )
      self.labels = tuple(tags)
    else:
      unknown = sorted(set(tags) - set(self.labels))
      if unknown:
        raise InputError(
            f"{path}: tag(s) {unknown[:5]} are not among the "
            f"{len(self.labels)} tags the model has; fix the file or list "
            "every tag in TokenClassificationTask.labels"
        )
    return sentences

  def feature_spec(self):
    return {
        **packed_input_spec(self.seq_length),
        "label_ids": tf.TensorSpec([self.seq_length], tf.int32),
    }

  def feature_options(self):
    return {"labels": list(self.labels), **self.long_text.feature_options()}

  def featurize(self, examples, *, training):
    """One feature per sentence (truncate) or per window; each carries
    `document` (its sentence) and `word_positions` (per word, the position
    whose logits give its tag, or -1)."""
    if self.long_text.windows is not None:
      yield from self._window_features(examples)
      return
    index = {tag: i for i, tag in enumerate(self.labels)}
    budget = self.seq_length - 2
    cut = 0
    for document, sentence in enumerate(examples):
      pieces, positions, label_ids = [], [], [-1]  # -1: [CLS]
      for k, word in enumerate(sentence.words):
        ids = self.tokenizer.tokenize(word)
        if len(pieces) + len(ids) > budget:
          cut += len(sentence.words) - k
          break
        positions.append(1 + len(pieces) if ids else -1)
        if ids:
          tag = sentence.tags[k] if sentence.tags else None
          label_ids += [index[tag] if tag is not None else -1]
          label_ids += [-1] * (len(ids) - 1)
        pieces += ids
      feature = self.pack(pieces)
      label_ids += [-1] * (self.seq_length - len(label_ids))
      feature["label_ids"] = np.array(label_ids, np.int32)
      feature["word_positions"] = positions  # metadata: first pieces
      feature["document"] = document
      yield feature
    if cut:
      logging.warning(
          "%s: %d word(s) did not fit in seq_length=%d pieces; they are "
          "predicted %s (raise the task's seq_length to keep them)",
          self.name,
          cut,
          self.seq_length,
          OUTSIDE,
      )

  def _window_features(self, examples):
    """The windows of every sentence's pieces: each labels every word whose
    first piece it holds; `word_positions` names only the words it gives
    the most context."""
    index = {tag: i for i, tag in enumerate(self.labels)}
    windows = self.long_text.windows
    unread = 0
    for document, sentence in enumerate(examples):
      pieces, first = [], []  # first[k]: word k's first piece, or -1
      for word in sentence.words:
        ids = self.tokenizer.tokenize(word)
        first.append(len(pieces) if ids else -1)
        pieces += ids
      spans = windows.spans(len(pieces))
      end = windows.reach(len(pieces))
      unread += sum(f >= end for f in first)
      for j, (start, length) in enumerate(spans):
        label_ids = [-1] * self.seq_length
        positions = []
        for k, f in enumerate(first):
          inside = f >= 0 and start <= f < start + length
          if inside and sentence.tags:
            label_ids[1 + f - start] = index[sentence.tags[k]]
          best = inside and long_text_lib.is_max_context(spans, j, f)
          positions.append(1 + f - start if best else -1)
        feature = self.pack(pieces[start : start + length])
        feature["label_ids"] = np.array(label_ids, np.int32)
        feature["word_positions"] = positions
        feature["document"] = document
        yield feature
    if unread:
      logging.warning(
          "%s: %d word(s) lie past %d windows; they are predicted %s (raise "
          "TokenClassificationTask.max_windows to read them)",
          self.name,
          unread,
          windows.max_windows,
          OUTSIDE,
      )

  @property
  def epoch_size(self) -> int:
    """With windows, an epoch is every window once."""
    if self.long_text.windows is None:
      return super().epoch_size
    return self.prepare_training_data()

  # --- Model, loss, metrics ---------------------------------------------------

  def build_task_model(self):
    return AlbertTokenClassifier.from_config_object(
        self.config,
        num_classes=len(self.labels),
        dropout_rate=self.dropout_rate,
    )

  def loss_totals(self, batch):
    totals = {
        "tokens": tf.reduce_sum(tf.cast(batch["label_ids"] >= 0, tf.float32))
    }
    if self._weighted():
      totals["weights"] = tf.reduce_sum(
          weighting.label_weights(batch["label_ids"], self.class_weight_vector)
      )
    return totals

  def _token_losses(self, outputs, batch):
    """([B, T] cross-entropy, [B, T] weights: 1 on labelled pieces)."""
    labels = batch["label_ids"]
    weights = tf.cast(labels >= 0, tf.float32)
    losses = tf_keras.losses.sparse_categorical_crossentropy(
        tf.maximum(labels, 0), outputs["logits"], from_logits=True
    )
    return losses * weights, weights

  def _weighted(self) -> bool:
    return self.class_weight_vector is not None or bool(self.focal_gamma)

  def count_training_labels(self, examples) -> None:
    """Each tag's training words, and the class weights from them."""
    counts = np.zeros([len(self.labels)], np.int64)
    for example in examples:
      for tag in example.tags or ():
        counts[self.labels.index(tag)] += 1
    self.class_weight_vector = weighting.class_weights(
        self.class_weights,
        self.labels,
        counts,
        "TokenClassificationTask.class_weights",
    )
    self._weight_facts = weighting.report(
        self.name,
        "training words by tag",
        self.labels,
        counts,
        self.class_weight_vector,
    )

  def compute_loss(self, outputs, batch, totals):
    if self._weighted():
      terms = weighting.softmax_loss(
          batch["label_ids"],
          outputs["logits"],
          self.class_weight_vector,
          self.focal_gamma,
      )
      return {
          "loss": tf.reduce_sum(terms) / tf.maximum(totals["weights"], 1e-12)
      }
    losses, _ = self._token_losses(outputs, batch)
    return {"loss": tf.reduce_sum(losses) / tf.maximum(totals["tokens"], 1.0)}

  def build_metrics(self):
    return [
        tf_keras.metrics.SparseCategoricalAccuracy(name="accuracy"),
        tf_keras.metrics.Mean(name="cross_entropy"),
    ]

  def update_metrics(self, metrics, outputs, batch, losses=None):
    del losses  # Its per-example terms are cheap to recompute.
    by_name = {m.name: m for m in metrics}
    per_token, weights = self._token_losses(outputs, batch)
    labels = tf.maximum(batch["label_ids"], 0)
    by_name["accuracy"].update_state(
        labels, outputs["logits"], sample_weight=weights
    )
    by_name["cross_entropy"].update_state(per_token, sample_weight=weights)

  # --- Predictions ------------------------------------------------------------

  def _full_tags(self, examples, features, outputs) -> List[List[str]]:
    """Every word's predicted tag, from the feature naming its position
    (`word_positions`); "O" for a word no feature reads (cut by seq_length
    or past the last window, or without pieces)."""
    best = np.argmax(outputs["logits"], axis=-1)  # [N, T]
    tags = [[OUTSIDE] * len(e.words) for e in examples]
    for feature, row in zip(features, best):
      sentence = tags[feature["document"]]
      for k, p in enumerate(feature["word_positions"]):
        if p >= 0:
          sentence[k] = self.labels[row[p]]
    return tags

  def evaluate_outputs(self, split, examples, features, outputs):
    predicted = self._full_tags(examples, features, outputs)
    true = [list(e.tags) for e in examples]
    scores = entity_metrics.entity_scores(true, predicted)
    words = sum(len(t) for t in true)
    scores["accuracy"] = (
        sum(a == b for t, p in zip(true, predicted) for a, b in zip(t, p))
        / words
    )
    # Over words ("O" for words cut by seq_length, a tag even if unlearnt).
    names = list(self.labels) + [OUTSIDE] * (OUTSIDE not in self.labels)
    index = {tag: i for i, tag in enumerate(names)}
    scores.update(
        classification_metrics.per_class(
            [index[tag] for tags in predicted for tag in tags],
            [index[tag] for tags in true for tag in tags],
            names,
            prefix="word/",
        )
    )
    return scores

  def write_predictions(self, split, examples, features, outputs, output_dir):
    predicted = self._full_tags(examples, features, outputs)
    path = os.path.join(output_dir, f"{split}_predictions.txt")
    lines = []
    for example, tags in zip(examples, predicted):
      lines += [f"{w} {t}" for w, t in zip(example.words, tags)] + [""]
    atomic_write.write_atomic(path, "\n".join(lines))
    return [path]

  def predict_to_files(self, model, output_dir: str, runner=None) -> List[str]:
    conll_data.require_split_file(
        self._require_data_dir(),
        "test",
        task=self.name,
        hint="put the sentences to tag there (one word per line)",
    )
    return super().predict_to_files(model, output_dir, runner)

  # --- MODEL_DIR/labels.json --------------------------------------------------

  def saved_facts(self) -> Dict[str, Any]:
    return dict(
        labels=list(self.labels),
        long_text=self.long_text.facts(),
        **self._weight_facts,
    )

  def use_state(self, state: TaskState) -> None:
    """The tag set, from MODEL_DIR/labels.json (or, before building a model
    without training, the training file)."""
    found = state.read_facts(self.name)
    if found is not None:
      self._use_saved_labels(*found)
      self.long_text.adopt(found[0], found[1].get("long_text"))
    if state.for_model:
      self._require_model_facts(state)

  def _use_saved_labels(self, path, saved) -> None:
    labels = tuple(saved.get("labels") or ())
    if not labels:
      raise InputError(f"{path}: no labels; retrain or restore the file")
    if self.given_labels is not None and labels != self.given_labels:
      raise InputError(
          f"{path}: the model was trained on tags {list(labels)}, not "
          f"TokenClassificationTask.labels={list(self.given_labels)}"
      )
    self._saved_labels = labels
    self.labels = labels

  def _require_model_facts(self, state: TaskState) -> None:
    if self.labels is not None:
      return
    if self.data_dir and conll_data.find_split_file(
        self.data_dir, self.train_split
    ):
      self.read_examples(self.train_split)
      return
    raise InputError(
        f"{self.name}: "
        f"{state.facts_path} is missing and "
        "there is no training file in --data_dir to take the tags from; point "
        "--model_dir at a directory this task trained"
    )

  def serving_module(self, model, preprocessor):
    return TokenClassificationServingModule(
        model,
        preprocessor,
        labels=self.labels,
        windows=self.long_text.windows,
    )
