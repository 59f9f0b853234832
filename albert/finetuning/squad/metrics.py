"""The official SQuAD evaluation scripts, re-implemented faithfully.

v1.1 (`evaluate-v1.1.py`, Rajpurkar et al., 2016): answers are normalised
(lower case, punctuation removed, articles a/an/the removed, whitespace
collapsed); exact match and bag-of-tokens F1 take the max over the gold
answers; both are averaged over every question of the file, x100.

v2.0 (`evaluate-v2.0.py`, Rajpurkar et al., 2018): a question whose gold
answers are all empty after normalisation has gold [""]; the F1 of two empty
token lists is 1, of one empty list 0. Given `null_odds` (the script's
`na_prob` file), a question whose odds exceed `na_prob_thresh` counts as
predicted unanswerable; `find_best_thresh` sweeps the threshold.
"""

import collections
import re
import string
from typing import Any, Dict, List, Mapping, Optional, Tuple

from absl import logging

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(s: str) -> str:
  """Lower text and remove punctuation, articles and extra whitespace."""
  s = s.lower()
  s = "".join(ch for ch in s if ch not in _PUNCTUATION)
  s = _ARTICLES.sub(" ", s)
  return " ".join(s.split())


def _tokens(s: str) -> List[str]:
  return normalize_answer(s).split() if s else []


def exact_match(prediction: str, gold: str) -> int:
  return int(normalize_answer(prediction) == normalize_answer(gold))


def f1_v1(prediction: str, gold: str) -> float:
  """v1.1 `f1_score` (0 when either side normalises to nothing)."""
  pred, ref = _tokens(prediction), _tokens(gold)
  same = sum((collections.Counter(pred) & collections.Counter(ref)).values())
  if same == 0:
    return 0.0
  precision, recall = same / len(pred), same / len(ref)
  return 2 * precision * recall / (precision + recall)


def f1_v2(prediction: str, gold: str) -> float:
  """v2.0 `compute_f1`: empty vs empty is 1."""
  pred, ref = _tokens(prediction), _tokens(gold)
  if not pred or not ref:
    return float(pred == ref)
  return f1_v1(prediction, gold)


def evaluate_v1(
    gold: Mapping[str, List[str]], predictions: Mapping[str, str]
) -> Dict[str, float]:
  """`exact_match` and `f1` (x100) over every question of `gold`.

  Args:
    gold: qas_id -> gold answer texts, in file order.
    predictions: qas_id -> predicted text; a missing one scores 0.
  """
  em = f1 = 0.0
  for qid, answers in gold.items():
    if qid not in predictions:
      logging.warning("Unanswered question %s will receive score 0.", qid)
      continue
    pred = predictions[qid]
    em += max(exact_match(pred, a) for a in answers)
    f1 += max(f1_v1(pred, a) for a in answers)
  total = max(len(gold), 1)
  return {"exact_match": 100.0 * em / total, "f1": 100.0 * f1 / total}


def _raw_scores_v2(
    gold, predictions
) -> Tuple[Dict[str, int], Dict[str, float]]:
  exact, f1 = {}, {}
  for qid, answers in gold.items():
    answers = [a for a in answers if normalize_answer(a)] or [""]
    if qid not in predictions:
      logging.warning("Missing prediction for %s", qid)
      continue
    pred = predictions[qid]
    exact[qid] = max(exact_match(pred, a) for a in answers)
    f1[qid] = max(f1_v2(pred, a) for a in answers)
  return exact, f1


def _apply_threshold(scores, null_odds, has_ans, thresh):
  return {
      qid: float(not has_ans[qid]) if null_odds[qid] > thresh else s
      for qid, s in scores.items()
  }


def _mean(scores, qids) -> Dict[str, Any]:
  total = len(qids)
  return {
      "exact": 100.0 * sum(scores[0][k] for k in qids) / total,
      "f1": 100.0 * sum(scores[1][k] for k in qids) / total,
      "total": total,
  }


def find_best_thresh(
    predictions, scores, null_odds, has_ans
) -> Tuple[float, float]:
  """The official sweep: (best score x100, the null-odds threshold)."""
  cur = best = sum(1 for k in has_ans if not has_ans[k])
  best_thresh = 0.0
  for qid in sorted(null_odds, key=lambda k: null_odds[k]):
    if qid not in scores:
      continue
    if has_ans[qid]:
      diff = scores[qid]
    else:
      diff = -1 if predictions[qid] else 0
    cur += diff
    if cur > best:
      best, best_thresh = cur, null_odds[qid]
  return 100.0 * best / len(scores), best_thresh


# evaluate-v2.0.py's default `--na-prob-thresh`, which the original's
# `squad_utils.evaluate_v2` applies to the raw null odds (cls logits).
NA_PROB_THRESH = 1.0


def evaluate_v2_original(
    gold: Mapping[str, List[str]],
    raw_predictions: Mapping[str, str],
    null_odds: Mapping[str, float],
    threshold: float,
) -> Dict[str, Any]:
  """The headline v2.0 figures as the original's `squad_utils.evaluate_v2`
  computes them (docs/reference.md section 6).

  A question is answered "" when its null odds reach `threshold` (`>=`);
  those predictions are then scored with the null odds as the script's
  `na_prob` at NA_PROB_THRESH, so a question whose odds exceed 1.0 counts as
  predicted unanswerable even when `threshold` is higher. `best_*` come from
  the raw predictions (the threshold sweep).

  Returns:
    `exact`, `f1`, `total`, `HasAns_*` / `NoAns_*`, `best_*` and
    `null_threshold`.
  """
  predictions = {
      qid: "" if null_odds[qid] >= threshold else text
      for qid, text in raw_predictions.items()
  }
  out = evaluate_v2(gold, predictions, null_odds, NA_PROB_THRESH)
  out = {k: v for k, v in out.items() if not k.startswith("best_")}
  best = evaluate_v2(gold, raw_predictions, null_odds)
  out.update({k: v for k, v in best.items() if k.startswith("best_")})
  out["null_threshold"] = threshold
  return out


def evaluate_v2(
    gold: Mapping[str, List[str]],
    predictions: Mapping[str, str],
    null_odds: Optional[Mapping[str, float]] = None,
    na_prob_thresh: float = 1.0,
) -> Dict[str, Any]:
  """The v2.0 script's output dict.

  Args:
    gold: qas_id -> gold answer texts ([] for unanswerable).
    predictions: qas_id -> predicted text ("" = no answer).
    null_odds: qas_id -> score, higher = more likely unanswerable (the
      script's `--na-prob-file`); enables the `best_*` entries.
    na_prob_thresh: odds above it count as "no answer".

  Returns:
    `exact`, `f1`, `total`, `HasAns_*` / `NoAns_*` (when such questions
    exist), and with null_odds `best_exact`, `best_exact_thresh`, `best_f1`,
    `best_f1_thresh`.
  """
  has_ans = {qid: bool(answers) for qid, answers in gold.items()}
  odds = (
      dict(null_odds)
      if null_odds is not None
      else {k: 0.0 for k in predictions}
  )
  exact_raw, f1_raw = _raw_scores_v2(gold, predictions)
  scores = (
      _apply_threshold(exact_raw, odds, has_ans, na_prob_thresh),
      _apply_threshold(f1_raw, odds, has_ans, na_prob_thresh),
  )
  out = _mean(scores, list(scores[0]))
  for prefix, want in (("HasAns", True), ("NoAns", False)):
    qids = [k for k, v in has_ans.items() if v == want]
    if qids:
      out.update({f"{prefix}_{k}": v for k, v in _mean(scores, qids).items()})
  if null_odds is not None:
    out["best_exact"], out["best_exact_thresh"] = find_best_thresh(
        predictions, exact_raw, odds, has_ans
    )
    out["best_f1"], out["best_f1_thresh"] = find_best_thresh(
        predictions, f1_raw, odds, has_ans
    )
  return out
