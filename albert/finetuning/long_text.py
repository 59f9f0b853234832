"""Texts longer than the model: overlapping windows and their aggregation.

`long_text='truncate'` (the default) keeps the first `seq_length - 2`
pieces of a text, as the original `run_classifier.py` does. With
`long_text='windows'` a text's pieces are cut into windows of `length =
seq_length - 2` pieces starting every `stride` pieces (0, stride,
2 x stride, ...) until one reaches the end, as SQuAD's `doc_stride` reads a
passage (docs/reference.md section 6); at most `max_windows` of them, the
first ones (a longer text's tail is not read, and the run says how many
texts lost theirs). Every window is one encoder input `[CLS] piece... [SEP]`.

A document's answer comes from its windows' logits [W, C] (`aggregate`):
  mean_logits      the mean of the windows' logits (the default);
  max_probability  each label's largest probability over the windows,
                   returned as logits that give it back (softmax: its log,
                   renormalised by softmax; sigmoid: the largest logit).

The same rule runs in Python (`Windows.split`, `aggregate`) for training,
dev metrics and prediction files, and in the graph (`Windows.split_ragged`,
`aggregate_tf`) for the SavedModels, so the served answer is the reported
one.
"""

import dataclasses
from typing import Any, Dict, List, Optional, Sequence, Tuple

from absl import logging
import numpy as np
import tensorflow as tf

from official.errors import InputError

MODES = ("truncate", "windows")
AGGREGATIONS = ("mean_logits", "max_probability")
# How logits become probabilities: classes, independent labels, or a score.
ACTIVATIONS = ("softmax", "sigmoid", "identity")


@dataclasses.dataclass(frozen=True)
class Windows:
  """The windows of one task: `length` pieces each, every `stride` pieces,
  at most `max_windows` per text."""

  length: int
  stride: int
  max_windows: int

  def count(self, num_pieces: int) -> int:
    """How many windows a text of `num_pieces` pieces gets."""
    if num_pieces <= self.length:
      return 1
    needed = 1 + -(-(num_pieces - self.length) // self.stride)
    return min(needed, self.max_windows)

  def split(self, pieces: Sequence[int]) -> List[List[int]]:
    """The windows of one text's pieces (one, maybe empty, for a short text)."""
    return [
        list(pieces[start : start + length])
        for start, length in self.spans(len(pieces))
    ]

  def spans(self, num_pieces: int) -> List[Tuple[int, int]]:
    """(start, length) of each window of a text of `num_pieces` pieces."""
    return [
        (start, max(0, min(self.length, num_pieces - start)))
        for start in range(0, self.count(num_pieces) * self.stride, self.stride)
    ]

  def reach(self, num_pieces: int) -> int:
    """How many of a text's first pieces its windows read."""
    start, length = self.spans(num_pieces)[-1]
    return start + length

  def split_ragged(
      self, pieces: tf.RaggedTensor
  ) -> Tuple[tf.RaggedTensor, tf.Tensor, tf.Tensor]:
    """`split` in the graph, for a batch.

    Args:
      pieces: int32 ragged [B, (P)].

    Returns:
      (windows int32 ragged [W, (<= length)], document int32 [W]: the text
      each window belongs to, num_windows int32 [B]).
    """
    index, document, num_windows = self.positions(pieces)
    windows = index.with_flat_values(
        tf.gather(pieces.flat_values, index.flat_values)
    )
    return windows, document, num_windows

  def positions(
      self, pieces: tf.RaggedTensor
  ) -> Tuple[tf.RaggedTensor, tf.Tensor, tf.Tensor]:
    """`split_ragged`, each window holding its pieces' positions in
    `pieces.flat_values` (int32 ragged [W, (<= length)]) instead."""
    lengths = tf.cast(pieces.row_lengths(), tf.int32)  # [B]
    over = tf.maximum(lengths - self.length, 0)
    needed = 1 + (over + self.stride - 1) // self.stride
    num_windows = tf.minimum(needed, self.max_windows)  # [B]
    local = tf.ragged.range(num_windows)  # [B, (W_b)]
    document = tf.cast(local.value_rowids(), tf.int32)  # [W]
    start = local.flat_values * self.stride  # [W]
    size = tf.minimum(self.length, tf.gather(lengths, document) - start)
    base = tf.gather(tf.cast(pieces.row_starts(), tf.int32), document)
    index = tf.ragged.range(base + start, base + start + tf.maximum(size, 0))
    return index, document, num_windows

  def max_context_positions(
      self, index: tf.RaggedTensor, num_pieces: tf.Tensor
  ) -> Tuple[tf.Tensor, tf.Tensor]:
    """`is_max_context` in the graph, for every piece.

    Args:
      index: `positions`'s windows, int32 ragged [W, (<= length)].
      num_pieces: the pieces of the batch (int32 scalar).

    Returns:
      (window int32 [num_pieces], position int32 [num_pieces]): the window
      giving each piece its most context (the first on ties) and the
      piece's place in it (from 0, before [CLS] is counted); -1 for a piece
      no window holds.
    """
    size = tf.cast(index.row_lengths(), tf.int32)  # [W]
    j = tf.ragged.range(size).flat_values  # place in the window
    window = tf.repeat(tf.range(tf.size(size)), size)
    length = tf.repeat(size, size)
    # The same float64 arithmetic as `is_max_context`.
    score = tf.cast(tf.minimum(j, length - 1 - j), tf.float64) + 0.01 * (
        tf.cast(length, tf.float64)
    )
    piece = index.flat_values
    best = tf.math.unsorted_segment_max(score, piece, num_pieces)
    candidate = tf.where(score >= tf.gather(best, piece), window, tf.int32.max)
    chosen = tf.math.unsorted_segment_min(candidate, piece, num_pieces)
    place = tf.math.unsorted_segment_max(
        tf.where(window == tf.gather(chosen, piece), j, -1), piece, num_pieces
    )
    held = place >= 0
    return tf.where(held, chosen, -1), tf.where(held, place, -1)


def check(
    owner: str,
    *,
    long_text: str,
    window_stride: Optional[int],
    max_windows: int,
    aggregation: str,
    seq_length: int,
) -> Optional[Windows]:
  """The task's `Windows` (None for 'truncate'); one-line errors."""
  if long_text not in MODES:
    raise InputError(
        f"{owner}.long_text={long_text!r} is not one of {', '.join(MODES)}"
    )
  if aggregation is not None and aggregation not in AGGREGATIONS:
    raise InputError(
        f"{owner}.aggregation={aggregation!r} is not one of "
        f"{', '.join(AGGREGATIONS)}"
    )
  if not isinstance(max_windows, int) or max_windows < 1:
    raise InputError(
        f"{owner}.max_windows={max_windows!r} must be an integer >= 1 (the "
        "most windows read from one text)"
    )
  length = seq_length - 2
  if window_stride is not None and not 1 <= window_stride <= length:
    raise InputError(
        f"{owner}.window_stride={window_stride!r} must be in [1, {length}] "
        "(the pieces one window holds, seq_length - 2); None: half of that"
    )
  if long_text == "truncate":
    return None
  return Windows(length, window_stride or max(1, length // 2), max_windows)


# The most windows read from one text unless a task says otherwise.
MAX_WINDOWS = 16


class LongText:
  """A task's long-text settings, checked, and kept in MODEL_DIR/labels.json
  (`facts`) so that eval, predict and export read texts as training did.

  Args:
    owner: the task class name, for messages.
    long_text: 'truncate' or 'windows'; None: the model directory's
      setting (`adopt`), else 'truncate'.
    window_stride: as `check`; None: the model directory's, else half a
      window.
    max_windows: None: the model directory's, else MAX_WINDOWS.
    aggregation: None: the model directory's, else 'mean_logits'.
    seq_length: the task's packed length.
    activation: how the task's logits become probabilities
      (`ACTIVATIONS`).
    aggregates: False for a task that answers per window position (token
      classification): no aggregation.

  A setting the run gives wins over the model directory's; a difference
  is logged.
  """

  def __init__(
      self,
      owner: str,
      *,
      long_text: Optional[str],
      window_stride: Optional[int],
      max_windows: Optional[int],
      aggregation: Optional[str],
      seq_length: int,
      activation: str,
      aggregates: bool = True,
  ):
    self.owner = owner
    self.seq_length = seq_length
    self.activation = activation
    self.aggregates = aggregates
    given = {
        "mode": long_text,
        "window_stride": window_stride,
        "max_windows": max_windows,
        "aggregation": aggregation if aggregates else None,
    }
    self._given = {k: v for k, v in given.items() if v is not None}
    self._apply(self._given)

  def _apply(self, settings: Dict[str, Any]) -> None:
    mode = settings.get("mode", "truncate")
    self.aggregation = (
        settings.get("aggregation", "mean_logits") if self.aggregates else None
    )
    if self.aggregation is not None:
      check_aggregation(self.owner, self.aggregation, self.activation)
    self.windows = check(
        self.owner,
        long_text=mode,
        window_stride=settings.get("window_stride"),
        max_windows=settings.get("max_windows", MAX_WINDOWS),
        aggregation=self.aggregation,
        seq_length=self.seq_length,
    )

  def facts(self) -> Dict[str, Any]:
    """How long texts are read (MODEL_DIR/labels.json `long_text`)."""
    if self.windows is None:
      return {"mode": "truncate"}
    facts = {
        "mode": "windows",
        "window_stride": self.windows.stride,
        "max_windows": self.windows.max_windows,
    }
    if self.aggregation is not None:
      facts["aggregation"] = self.aggregation
    return facts

  def feature_options(self) -> Dict[str, Any]:
    """What of `facts` changes the features (a cache key); {} to truncate,
    so that truncating keeps its cache."""
    if self.windows is None:
      return {}
    facts = dict(self.facts())
    facts.pop("aggregation", None)
    return {"long_text": facts}

  def adopt(self, path: str, saved: Optional[Dict[str, Any]]) -> None:
    """The model directory's settings (`saved`, from `path`), each one this
    run gives replacing the saved one (a difference is logged)."""
    saved = saved or {"mode": "truncate"}
    self._apply({**saved, **self._given})
    if self.facts() != saved:
      logging.warning(
          "%s: the model was trained with long_text %s; this run uses %s",
          path,
          saved,
          self.facts(),
      )


def is_max_context(
    spans: Sequence[Tuple[int, int]], span_index: int, position: int
) -> bool:
  """BERT's `_check_is_max_context` (the original's `run_squad.py`) for
  (start, length) windows: whether window `span_index` gives the token at
  `position` its most context, min(tokens before, tokens after) + 0.01 x
  the window's length, the first such window on ties."""
  best_score, best_index = None, None
  for index, (start, length) in enumerate(spans):
    end = start + length - 1
    if position < start or position > end:
      continue
    score = min(position - start, end - position) + 0.01 * length
    if best_score is None or score > best_score:
      best_score, best_index = score, index
  return best_index == span_index


def _probabilities(logits: np.ndarray, activation: str) -> np.ndarray:
  if activation == "softmax":
    shifted = np.exp(logits - logits.max(-1, keepdims=True))
    return shifted / shifted.sum(-1, keepdims=True)
  return 1.0 / (1.0 + np.exp(-logits))


def aggregate(
    logits: np.ndarray,
    document: np.ndarray,
    num_documents: int,
    aggregation: str,
    activation: str,
) -> np.ndarray:
  """float32 [D, C] document logits from the windows' [W, C] (numpy).

  Every document must have at least one window.
  """
  logits = np.asarray(logits, np.float64)
  counts = np.bincount(document, minlength=num_documents)
  if aggregation == "mean_logits" or activation == "identity":
    sums = np.zeros((num_documents,) + logits.shape[1:])
    np.add.at(sums, document, logits)
    return (sums / counts.reshape((-1,) + (1,) * (logits.ndim - 1))).astype(
        np.float32
    )
  if activation == "sigmoid":  # max of sigmoids = sigmoid of the max
    best = np.full((num_documents,) + logits.shape[1:], -np.inf)
    np.maximum.at(best, document, logits)
    return best.astype(np.float32)
  best = np.zeros((num_documents,) + logits.shape[1:])
  np.maximum.at(best, document, _probabilities(logits, activation))
  return np.log(best).astype(np.float32)


def aggregate_tf(
    logits: tf.Tensor,
    document: tf.Tensor,
    num_documents: tf.Tensor,
    aggregation: str,
    activation: str,
) -> tf.Tensor:
  """`aggregate` in the graph: float32 [B, C] from [W, C], computed in
  float64 as `aggregate` is."""
  logits = tf.cast(logits, tf.float64)  # as `aggregate`
  if aggregation == "mean_logits" or activation == "identity":
    out = tf.math.unsorted_segment_mean(logits, document, num_documents)
  elif activation == "sigmoid":
    out = tf.math.unsorted_segment_max(logits, document, num_documents)
  else:
    out = tf.math.log(
        tf.math.unsorted_segment_max(
            tf.nn.softmax(logits, axis=-1), document, num_documents
        )
    )
  return tf.cast(out, tf.float32)


def check_aggregation(owner: str, aggregation: str, activation: str) -> None:
  """Regression has no probability to take the largest of."""
  if activation == "identity" and aggregation == "max_probability":
    raise InputError(
        f"{owner}.aggregation='max_probability': a regression score has no "
        "probability; use 'mean_logits' (the mean score of the windows)"
    )


def text_logits(
    model,
    preprocessor,
    text: tf.Tensor,
    second: Optional[tf.Tensor],
    windows: Optional[Windows],
    aggregation: str,
    activation: str,
) -> Tuple[tf.Tensor, Dict[str, tf.Tensor]]:
  """What a raw-text classification signature answers from: string [B]
  (and the pair's `second` [B], without windows) -> (float32 [B, C] logits,
  extra outputs). Without `windows`, one packed input per text and no
  extra outputs; with them, every window of every text through `model`
  (one batch, padded to the longest window), `aggregate_tf`, and
  `num_windows` int32 [B]."""
  if windows is None:
    inputs = preprocessor(text, second)
    return model(inputs, training=False)["logits"], {}
  pieces = preprocessor.tokenize(text)
  parts, document, num_windows = windows.split_ragged(pieces)
  inputs = preprocessor.pack_trimmed([parts])  # [W, T]
  logits = model(inputs, training=False)["logits"]  # [W, C]
  documents = tf.shape(text)[0]
  return (
      aggregate_tf(logits, document, documents, aggregation, activation),
      {"num_windows": num_windows},
  )
