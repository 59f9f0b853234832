"""`SquadPostprocessor`: window logits -> answer texts, n-best lists, null odds.

v1.1-style heads (start and end logit per token) are decoded as BERT's
`run_squad.write_predictions`: for each window the `n_best_size` best starts
and ends; a span must start and end on context tokens, in the window where
its start has maximal context, with end >= start and at most
`max_answer_length` tokens; candidates of all windows of a question are
ranked by start + end logit. For v2.0 the null score is the minimum over the
windows of start_logit[CLS] + end_logit[CLS] and the null odds are
null score - best span score (BERT's `score_diff`).

XLNet-style heads (Yang et al., 2019; ALBERT's `write_predictions_v2`) give a
5x5 beam of (start, end) log-probabilities per window, ranked by their sum;
the null odds are the minimum over the windows of the answerability logit.

The answer text is the context's own characters from the start token's first
character to the end token's last (`SquadFeature.token_to_chars`), as the
original's `squad_utils` slices `paragraph_text` through its character
alignment: a span that ends on "japan" of "Japan's" answers "Japan", with
the context's case, accents and whitespace. A question's prediction is ""
when its null odds exceed the threshold.
"""

import dataclasses
import json
import math
import os
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from albert.finetuning.squad.data import SquadExample
from albert.finetuning.squad.features import SquadFeature
from official.io import files
from official.io.atomic_write import write_atomic

NO_SPAN_ODDS = 1e9  # Null odds of a question with no valid span at all.


@dataclasses.dataclass
class _Candidate:
  feature: SquadFeature
  start: int  # token positions in the window
  end: int
  start_score: float
  end_score: float

  @property
  def score(self) -> float:
    return self.start_score + self.end_score


def _top_indexes(logits: np.ndarray, n: int) -> List[int]:
  return [int(i) for i in np.argsort(-np.asarray(logits), kind="stable")[:n]]


def _softmax(scores: Sequence[float]) -> List[float]:
  if not scores:
    return []
  top = max(scores)
  exps = [math.exp(s - top) for s in scores]
  total = sum(exps)
  return [e / total for e in exps]


class SquadPostprocessor:
  """Decodes model outputs of all windows into per-question answers.

  Args:
    n_best_size: candidates kept per question (and starts / ends per window
      for v1.1-style heads).
    max_answer_length: longest span, in tokens.

  `__call__(examples, features, results)` takes `results` as unique_id -> dict
  of numpy arrays of one window: either `start_logits`, `end_logits` [T]
  (v1.1-style) or `start_top_log_probs`, `start_top_index` [K1],
  `end_top_log_probs`, `end_top_index` [K1, K2] and `cls_logits` []
  (XLNet-style). It returns (predictions, nbest, null_odds): qas_id -> best
  non-null text ("" if none), qas_id -> list of spans {text, probability,
  start_score, end_score, start_word, end_word, start_char, end_char (end
  exclusive)}, qas_id -> null odds.
  """

  def __init__(self, *, n_best_size: int = 20, max_answer_length: int = 30):
    if n_best_size < 1 or max_answer_length < 1:
      raise ValueError(
          f"n_best_size={n_best_size} and max_answer_length="
          f"{max_answer_length} must be >= 1"
      )
    self.n_best_size = n_best_size
    self.max_answer_length = max_answer_length

  def _valid(self, feature: SquadFeature, start: int, end: int) -> bool:
    return (
        start in feature.token_to_word
        and end in feature.token_to_word
        and feature.token_is_max_context.get(start, False)
        and start <= end < start + self.max_answer_length
    )

  def _window_candidates(
      self, feature, result
  ) -> Tuple[List[_Candidate], float]:
    """Valid spans of one window and its null score."""
    out = []
    if "cls_logits" in result:  # XLNet-style beam.
      end_index = np.asarray(result["end_top_index"])
      for i, start in enumerate(np.asarray(result["start_top_index"])):
        for j, end in enumerate(end_index[i]):
          if self._valid(feature, int(start), int(end)):
            out.append(
                _Candidate(
                    feature,
                    int(start),
                    int(end),
                    float(result["start_top_log_probs"][i]),
                    float(result["end_top_log_probs"][i][j]),
                )
            )
      return out, float(result["cls_logits"])
    start_logits = np.asarray(result["start_logits"])
    end_logits = np.asarray(result["end_logits"])
    for start in _top_indexes(start_logits, self.n_best_size):
      for end in _top_indexes(end_logits, self.n_best_size):
        if self._valid(feature, start, end):
          out.append(
              _Candidate(
                  feature,
                  start,
                  end,
                  float(start_logits[start]),
                  float(end_logits[end]),
              )
          )
    return out, float(start_logits[0] + end_logits[0])

  def _nbest(self, example, candidates) -> List[Dict]:
    """Distinct texts of the best candidates, with softmax probabilities."""
    nbest, seen = [], set()
    for c in sorted(candidates, key=lambda c: c.score, reverse=True):
      if len(nbest) >= self.n_best_size:
        break
      start_char = c.feature.token_to_chars[c.start][0]
      end_char = c.feature.token_to_chars[c.end][1]
      text = example.context_text[start_char:end_char]
      if text in seen:
        continue
      seen.add(text)
      nbest.append(
          {
              "text": text,
              "start_score": c.start_score,
              "end_score": c.end_score,
              "start_word": c.feature.token_to_word[c.start],
              "end_word": c.feature.token_to_word[c.end],
              "start_char": start_char,
              "end_char": end_char,
          }
      )
    probs = _softmax([e["start_score"] + e["end_score"] for e in nbest])
    for entry, p in zip(nbest, probs):
      entry["probability"] = p
    return nbest

  def __call__(
      self,
      examples: Sequence[SquadExample],
      features: Sequence[SquadFeature],
      results: Mapping[int, Mapping[str, np.ndarray]],
  ):
    by_example: Dict[int, List[SquadFeature]] = {}
    for f in features:
      by_example.setdefault(f.example_index, []).append(f)
    predictions, nbest_json, null_odds = {}, {}, {}
    for index, example in enumerate(examples):
      candidates, null_score, xlnet = [], math.inf, False
      for feature in by_example.get(index, []):
        if feature.unique_id not in results:
          continue
        result = results[feature.unique_id]
        xlnet = "cls_logits" in result
        found, window_null = self._window_candidates(feature, result)
        candidates.extend(found)
        null_score = min(null_score, window_null)
      nbest = self._nbest(example, candidates)
      qid = example.qas_id
      nbest_json[qid] = nbest
      predictions[qid] = nbest[0]["text"] if nbest else ""
      if not nbest or math.isinf(null_score):
        null_odds[qid] = NO_SPAN_ODDS
      elif xlnet:
        null_odds[qid] = null_score
      else:  # BERT's score_diff: null score minus the best span's score.
        null_odds[qid] = (
            null_score - nbest[0]["start_score"] - nbest[0]["end_score"]
        )
    return predictions, nbest_json, null_odds


def apply_null_threshold(
    predictions: Mapping[str, str],
    null_odds: Mapping[str, float],
    threshold: float,
) -> Dict[str, str]:
  """ "" for every question whose null odds reach `threshold` (the
  original's `write_predictions_v2` answers only when `score_diff <
  null_score_diff_threshold`)."""
  return {
      qid: "" if null_odds[qid] >= threshold else text
      for qid, text in predictions.items()
  }


def write_prediction_files(
    output_dir: str,
    predictions: Mapping[str, str],
    nbest: Optional[Mapping[str, List[Dict]]] = None,
    null_odds: Optional[Mapping[str, float]] = None,
) -> List[str]:
  """Writes predictions.json (+ nbest_predictions.json, null_odds.json)
  atomically into `output_dir`; returns the paths written."""
  files.makedirs(output_dir)
  contents = {
      "predictions.json": predictions,
      "nbest_predictions.json": nbest,
      "null_odds.json": null_odds,
  }
  paths = []
  for name, content in contents.items():
    if content is None:
      continue
    path = os.path.join(output_dir, name)
    write_atomic(path, json.dumps(content, indent=2, ensure_ascii=False) + "\n")
    paths.append(path)
  return paths
