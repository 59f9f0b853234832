"""Training a sentence embedder on the user's own pairs.

`gin/finetune/sentence_embedding.gin` selects `SentenceEmbeddingTask`: the
encoder and a pooling layer (`AlbertSentenceEmbedder`), trained the way
sentence-transformers trains one. `DATA_DIR/{train,dev,test}` are CSV, TSV
or JSON Lines files (`own_data/reader.py`) in one of two forms, which the
training file's columns choose:

  anchor,positive[,negative]  in-batch negatives: the multiple-negatives
      ranking loss (sentence-transformers' `MultipleNegativesRankingLoss`):
      cross-entropy of each anchor's cosine similarities, times `scale`
      (20, as it sets it), to every positive of the batch (and every hard
      negative), its own positive being the right answer. Under a
      distribution strategy or gradient accumulation the candidates are
      those of each replica's micro-batch.
  text,text_pair,score        the cosine-similarity loss (its
      `CosineSimilarityLoss`): the squared error between the pair's cosine
      and the score (in [-1, 1] after dividing by `max_score`).

The dev file may have either form, whatever trained: anchor/positive rows
report retrieval accuracy@1 and MRR (every anchor against every positive and
negative of the split), scored pairs Pearson and Spearman correlation of
the cosine with the score; the dev-best checkpoint is kept as for every task.
`predict` writes SPLIT_embeddings.npy (the first text of each test row,
float32 [N, H], in file order) and, for rows with a second text,
SPLIT_predictions.EXT (id, cosine); `export` writes a SavedModel with
`embed` and `similarity` signatures (`EmbeddingServingModule`), and the model
directory keeps embedding.json, so albert-embed reads it directly.
"""

import dataclasses
import os
from typing import Any, Dict, List, Optional, Tuple

import gin
import numpy as np
import tensorflow as tf
import tf_keras

from albert.finetuning import classification_metrics
from albert.finetuning.finetune_task import FinetuneTask
from albert.finetuning.own_data import reader
from albert.finetuning.packing import packed_input_spec
from albert.modeling.pooling import MODES as POOLING_MODES
from albert.modeling.sentence_embedder import AlbertSentenceEmbedder
from albert.serving.embedding import Embedder
from albert.serving.embedding_serving import EmbeddingServingModule
from official.errors import InputError
from official.io import atomic_write
from official.io import table_rows

# The forms of a split file.
RANKING = "anchor_positive"  # anchor, positive[, negative]
SCORED = "scored_pairs"  # text, text_pair, score
TEXTS = "texts"  # text[, text_pair]: test files only


@dataclasses.dataclass(frozen=True)
class EmbeddingExample:
  """One row: its texts (anchor, positive[, negative]; or text[, text_pair])
  and, for scored pairs, the score (already divided by `max_score`)."""

  guid: str
  texts: Tuple[str, ...]
  score: Optional[float] = None


def retrieval_metrics(
    queries: np.ndarray, candidates: np.ndarray, block: int = 1024
) -> Dict[str, float]:
  """Accuracy@1 and MRR of `queries` [N, H] against `candidates` [M >= N, H]
  by cosine similarity, query i's answer being candidate i. A candidate
  tied with the answer does not push it down (the rank is one plus the
  candidates strictly more similar)."""
  q = _unit(queries)
  c = _unit(candidates)
  ranks = np.empty(len(q), np.float64)
  for start in range(0, len(q), block):
    sims = q[start : start + block] @ c.T  # [b, M]
    own = sims[np.arange(len(sims)), np.arange(start, start + len(sims))]
    ranks[start : start + len(sims)] = 1 + np.sum(sims > own[:, None], axis=1)
  return {
      "accuracy_at_1": float(np.mean(ranks == 1)),
      "mrr": float(np.mean(1.0 / ranks)),
  }


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  """Row-wise cosine similarity of two [N, H] arrays."""
  return np.sum(_unit(a) * _unit(b), axis=-1)


def _unit(x: np.ndarray) -> np.ndarray:
  x = np.asarray(x, np.float64)
  return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


@gin.configurable
class SentenceEmbeddingTask(FinetuneTask):
  """Trains the encoder and a pooling layer into a sentence embedder.

  Args:
    pooling: how token vectors become one vector (`POOLING_MODES`).
    normalize: whether the served vectors have unit length (the losses and
      metrics use cosine similarity either way).
    scale: the multiple-negatives ranking loss's similarity scale.
    max_score: what scores are divided by before the cosine loss (e.g. 5
      for STS-B's 0-5 scale); None: they are in [-1, 1] already.
    anchor_column, positive_column, negative_column: the columns of
      in-batch-negative rows (negative optional).
    text_column, text_pair_column, score_column: the columns of scored
      pairs (and of test texts).
    id_column: names rows in prediction files (else the row number).
    main_metric: what picks the best checkpoint: None for the dev file's
      form's (Spearman for scored pairs, MRR for anchor/positive rows).
    **kwargs: `FinetuneTask` arguments (dropout_rate is unused: no head).
  """

  name = "sentence_embedding"
  METRICS = {RANKING: ("mrr", "accuracy_at_1"), SCORED: ("spearman", "pearson")}

  def __init__(
      self,
      *,
      pooling: str = "mean",
      normalize: bool = True,
      scale: float = 20.0,
      max_score: Optional[float] = None,
      anchor_column: str = "anchor",
      positive_column: str = "positive",
      negative_column: str = "negative",
      text_column: str = "text",
      text_pair_column: str = "text_pair",
      score_column: str = "score",
      id_column: str = "id",
      main_metric: Optional[str] = None,
      **kwargs,
  ):
    super().__init__(**kwargs)
    if pooling not in POOLING_MODES:
      raise InputError(
          f"SentenceEmbeddingTask.pooling={pooling!r} is not one of "
          f"{', '.join(POOLING_MODES)}"
      )
    if scale <= 0:
      raise InputError(f"SentenceEmbeddingTask.scale={scale} must be > 0")
    if max_score is not None and max_score <= 0:
      raise InputError(
          f"SentenceEmbeddingTask.max_score={max_score} must be > 0"
      )
    known = [m for names in self.METRICS.values() for m in names]
    if main_metric is not None and main_metric not in known:
      raise InputError(
          f"SentenceEmbeddingTask.main_metric={main_metric!r} is not one of "
          f"{', '.join(known)}"
      )
    self.pooling = pooling
    self.normalize = normalize
    self.scale = float(scale)
    self.max_score = max_score
    self.ranking_columns = (anchor_column, positive_column, negative_column)
    self.scored_columns = (text_column, text_pair_column, score_column)
    self.id_column = id_column
    self._main_metric = main_metric
    self._splits = {}  # split -> (form, examples)

  # --- Files ------------------------------------------------------------------

  def _split_file(self, split: str) -> str:
    return reader.require_split_file(
        self._require_data_dir(),
        split,
        task=self.name,
        hint=f"put the {split} rows there",
    )

  def _form(self, path: str, keys, split: str) -> Tuple[str, Tuple[str, ...]]:
    """(the file's form, its text columns in role order)."""
    anchor, positive, negative = self.ranking_columns
    text, text_pair, score = self.scored_columns
    if anchor in keys and positive in keys:
      return RANKING, (anchor, positive) + ((negative,) * (negative in keys))
    if text in keys and text_pair in keys and score in keys:
      return SCORED, (text, text_pair)
    if split == "test" and text in keys:
      return TEXTS, (text,) + ((text_pair,) * (text_pair in keys))
    raise InputError(
        f"{path}: columns {', '.join(sorted(keys))}; {self.name} reads "
        f"{anchor},{positive}[,{negative}] rows (in-batch negatives) or "
        f"{text},{text_pair},{score} rows (cosine similarity); rename the "
        "columns or set the task's *_column settings"
    )

  def read_split(self, split: str) -> Tuple[str, List[EmbeddingExample]]:
    """(the split file's form, its rows), read once."""
    if split not in self._splits:
      path = self._split_file(split)
      rows, keys = table_rows.read_all_rows(path)
      form, columns = self._form(path, keys, split)
      examples, seen = [], {}
      for index, (number, row) in enumerate(rows):
        texts = tuple(reader.text_value(path, number, row, c) for c in columns)
        score = None
        if form == SCORED:
          score = self._score(path, number, row)
        guid = reader.row_id(
            path,
            number,
            row,
            index,
            column=self.id_column,
            keys=keys,
            seen=seen,
        )
        examples.append(EmbeddingExample(guid, texts, score))
      self._splits[split] = (form, examples)
    return self._splits[split]

  def _score(self, path, number, row) -> float:
    column = self.scored_columns[2]
    value = reader.label_value(path, number, row.get(column), column, True)
    if value is None:
      raise InputError(
          f"{path} line {number}: the {column!r} field is empty; give every "
          "pair a score"
      )
    score = value / (self.max_score or 1.0)
    if not -1.0 <= score <= 1.0:
      raise InputError(
          f"{path} line {number}: score {value} is outside [-1, 1] after "
          f"dividing by max_score={self.max_score}; set "
          "SentenceEmbeddingTask.max_score to the scale's top (e.g. 5.0)"
      )
    return score

  def read_examples(self, split):
    return self.read_split(split)[1]

  @property
  def train_form(self) -> str:
    return self.read_split(self.train_split)[0]

  @property
  def main_metric(self) -> str:
    """The explicit one, else the dev file's form's first metric."""
    split = self.eval_splits[0]
    reported = self.METRICS[self.read_split(split)[0]]
    if self._main_metric is None:
      return reported[0]
    if self._main_metric not in reported:
      raise InputError(
          f"SentenceEmbeddingTask.main_metric={self._main_metric!r}: the "
          f"{split} file's rows report {', '.join(reported)}; pick one of "
          "those or give the other form of rows"
      )
    return self._main_metric

  # --- Features ---------------------------------------------------------------

  def _roles(self) -> Tuple[str, ...]:
    if self.train_form == SCORED:
      return ("anchor", "positive")
    n = len(self.read_split(self.train_split)[1][0].texts)
    return ("anchor", "positive", "negative")[:n]

  def feature_spec(self):
    spec = {}
    for role in self._roles():
      for name, s in packed_input_spec(self.seq_length).items():
        if name != "input_type_ids":  # always 0: one segment per text
          spec[f"{role}_{name}"] = s
    spec["score"] = tf.TensorSpec([], tf.float32)
    return spec

  def prediction_spec(self):
    return packed_input_spec(self.seq_length)

  def feature_options(self):
    return {"form": self.train_form, "roles": list(self._roles())}

  def _packed(self, text: str) -> Dict[str, np.ndarray]:
    return self.pack(self.tokenizer.tokenize(text)[: self.seq_length - 2])

  def featurize(self, examples, *, training):
    """Training: one feature per row (each role's text packed under its
    prefix, and the score); prediction: one per text, row by row."""
    for row, example in enumerate(examples):
      if training:
        feature = {"score": example.score or 0.0}
        for role, text in zip(self._roles(), example.texts):
          packed = self._packed(text)
          feature[f"{role}_input_word_ids"] = packed["input_word_ids"]
          feature[f"{role}_input_mask"] = packed["input_mask"]
        yield feature
      else:
        for text in example.texts:
          yield {**self._packed(text), "row": row}

  # --- Model and loss ---------------------------------------------------------

  def build_task_model(self):
    return AlbertSentenceEmbedder.from_config_object(
        self.config, pooling=self.pooling, normalize=self.normalize
    )

  def embedding_settings(self) -> Dict[str, Any]:
    return {
        "pooling": self.pooling,
        "normalize": self.normalize,
        "max_seq_length": self.seq_length,
        "do_lower_case": self.do_lower_case,
    }

  def loss_totals(self, batch):
    rows = tf.shape(batch["anchor_input_word_ids"])[0]
    return {"examples": tf.cast(rows, tf.float32)}

  def _scores(self, outputs) -> tf.Tensor:
    """Ranking: [B, B or 2B] scaled cosines of each anchor to every
    candidate (positives, then negatives); scored pairs: [B] cosines."""
    anchor = tf.math.l2_normalize(outputs["anchor"], axis=-1)
    positive = tf.math.l2_normalize(outputs["positive"], axis=-1)
    if self.train_form == SCORED:
      return tf.reduce_sum(anchor * positive, axis=-1)
    candidates = [positive]
    if "negative" in outputs:
      candidates.append(tf.math.l2_normalize(outputs["negative"], axis=-1))
    return self.scale * tf.matmul(
        anchor, tf.concat(candidates, 0), transpose_b=True
    )

  def _per_example_loss(self, outputs, batch) -> tf.Tensor:
    scores = self._scores(outputs)
    if self.train_form == SCORED:
      return tf.square(scores - batch["score"])
    own = tf.range(tf.shape(scores)[0])
    return tf.nn.sparse_softmax_cross_entropy_with_logits(own, scores)

  def compute_loss(self, outputs, batch, totals):
    total = tf.reduce_sum(self._per_example_loss(outputs, batch))
    return {"loss": total / totals["examples"]}

  def build_metrics(self):
    if self.train_form == SCORED:
      return [tf_keras.metrics.Mean(name="squared_error")]
    return [
        tf_keras.metrics.Mean(name="cross_entropy"),
        tf_keras.metrics.Mean(name="in_batch_accuracy"),
    ]

  def update_metrics(self, metrics, outputs, batch, losses=None):
    del losses  # its per-example terms are cheap to recompute
    by_name = {m.name: m for m in metrics}
    per_example = self._per_example_loss(outputs, batch)
    if self.train_form == SCORED:
      by_name["squared_error"].update_state(per_example)
      return
    scores = self._scores(outputs)
    own = tf.range(tf.shape(scores)[0], dtype=tf.int64)
    hit = tf.equal(tf.argmax(scores, axis=-1), own)
    by_name["cross_entropy"].update_state(per_example)
    by_name["in_batch_accuracy"].update_state(tf.cast(hit, tf.float32))

  # --- Evaluation and prediction ----------------------------------------------

  @staticmethod
  def _by_role(examples, outputs) -> np.ndarray:
    """[rows, texts per row, H]: the prediction outputs, row by row."""
    vectors = np.asarray(outputs["embedding"], np.float32)
    return vectors.reshape(len(examples), -1, vectors.shape[-1])

  def evaluate_outputs(self, split, examples, features, outputs):
    form, _ = self.read_split(split)
    vectors = self._by_role(examples, outputs)
    if form == RANKING:
      candidates = (
          vectors[:, 1:].transpose(1, 0, 2).reshape(-1, vectors.shape[-1])
      )  # every positive, then every negative
      return retrieval_metrics(vectors[:, 0], candidates)
    predicted = cosine(vectors[:, 0], vectors[:, 1])
    scores = np.array([e.score for e in examples], np.float64)
    return {
        "spearman": classification_metrics.spearman(predicted, scores),
        "pearson": classification_metrics.pearson(predicted, scores),
    }

  def write_predictions(self, split, examples, features, outputs, output_dir):
    vectors = self._by_role(examples, outputs)
    embeddings = vectors[:, 0]
    if self.normalize:  # what the served `embed` returns
      embeddings = _unit(embeddings).astype(np.float32)
    path = os.path.join(output_dir, f"{split}_embeddings.npy")
    with atomic_write.atomic_file(path, "wb") as f:
      np.save(f, embeddings)
    written = [path]
    if vectors.shape[1] > 1:
      similarity = cosine(vectors[:, 0], vectors[:, 1])
      rows = [
          [e.guid, round(float(s), 6)] for e, s in zip(examples, similarity)
      ]
      written.append(
          reader.write_rows(
              self._split_file(split),
              split,
              ["id", "cosine"],
              rows,
              output_dir,
          )
      )
    return written

  def predict_to_files(self, model, output_dir: str, runner=None):
    for split in self.predict_splits:
      self._split_file(split)  # one line, before any output, if it is missing
    return super().predict_to_files(model, output_dir, runner)

  def serving_module(self, model, preprocessor):
    return EmbeddingServingModule(
        model, preprocessor, embedding=self.embedding_settings()
    )


def trained_embedder(task: SentenceEmbeddingTask, model) -> Embedder:
  """The `Embedder` of a trained task's model (albert-embed on a fine-tuned
  model directory): its encoder, tokenizer and embedding settings."""
  settings = task.embedding_settings()
  return Embedder(
      model.encoder,
      task.tokenizer,
      pooling=settings["pooling"],
      normalize=settings["normalize"],
      max_seq_length=settings["max_seq_length"],
  )
