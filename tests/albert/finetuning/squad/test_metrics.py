"""Official SQuAD v1.1 / v2.0 metrics against values computed by hand."""

import pytest

from albert.finetuning.squad import metrics as squad_metrics


def test_normalize_answer():
  assert (
      squad_metrics.normalize_answer("The  Quick, brown-fox an apple!")
      == "quick brownfox apple"
  )
  # Articles are whole words only; "theater" and "another" stay.
  assert squad_metrics.normalize_answer("A theater, another.") == (
      "theater another"
  )


def test_v1_by_hand():
  gold = {
      "q1": ["The Eiffel Tower", "Eiffel Tower."],
      "q2": ["Denver Broncos"],
      "q3": ["New York, New York"],
      "q4": ["an apple", "Apples!"],
      "q5": ["anything"],
      "q6": ["1,000"],
  }
  predictions = {
      "q1": "eiffel tower",  # EM 1, F1 1.
      "q2": "the Denver Broncos team",  # P 2/3, R 1 -> F1 0.8.
      "q3": "New York",  # counts: P 1, R 1/2 -> F1 2/3.
      "q4": "apples",  # matches the second gold answer.
      # q5 unanswered: 0.
      "q6": "1000",  # the comma is punctuation.
  }
  result = squad_metrics.evaluate_v1(gold, predictions)
  assert result["exact_match"] == pytest.approx(100 * 3 / 6)
  assert result["f1"] == pytest.approx(100 * (1 + 0.8 + 2 / 3 + 1 + 0 + 1) / 6)
  assert squad_metrics.f1_v1("", "x") == 0.0


def _v2_case():
  gold = {"a": ["Paris"], "b": ["in 1990", "1990"], "c": [], "d": []}
  predictions = {"a": "Paris", "b": "the year 1990", "c": "", "d": "London"}
  odds = {"a": -2.0, "b": 0.5, "c": 3.0, "d": 1.5}
  return gold, predictions, odds


def test_v2_by_hand():
  gold, predictions, odds = _v2_case()
  out = squad_metrics.evaluate_v2(gold, predictions, odds)
  # Odds > 1.0 for c and d: both scored as "no answer", correct (1, 1).
  # b: best gold "1990": P 1/2, R 1 -> F1 2/3; EM 0.
  assert out["total"] == 4
  assert out["exact"] == pytest.approx(75.0)
  assert out["f1"] == pytest.approx(100 * (1 + 2 / 3 + 1 + 1) / 4)
  assert out["HasAns_exact"] == pytest.approx(50.0)
  assert out["HasAns_f1"] == pytest.approx(100 * (1 + 2 / 3) / 2)
  assert out["HasAns_total"] == 2 and out["NoAns_total"] == 2
  assert out["NoAns_exact"] == out["NoAns_f1"] == pytest.approx(100.0)
  # Sweep from "all no answer" (2 correct), in odds order a, b, d, c:
  # exact: +1 (a) -> 3 at -2; +0; -1 (d says London); 0 -> best 3 at -2.
  assert out["best_exact"] == pytest.approx(75.0)
  assert out["best_exact_thresh"] == -2.0
  # f1: +1 -> 3 at -2; +2/3 -> 3.667 at 0.5; -1; 0 -> best at 0.5.
  assert out["best_f1"] == pytest.approx(100 * (3 + 2 / 3) / 4)
  assert out["best_f1_thresh"] == 0.5


def test_v2_without_odds_and_empty_gold_rules():
  gold, predictions, _ = _v2_case()
  out = squad_metrics.evaluate_v2(gold, predictions)
  # No odds: nothing is forced to "no answer"; d's "London" scores 0.
  assert out["exact"] == pytest.approx(100 * (1 + 0 + 1 + 0) / 4)
  assert "best_exact" not in out
  # A gold answer that normalises to nothing ("The") becomes "".
  assert squad_metrics.evaluate_v2({"x": ["The"]}, {"x": ""})["exact"] == 100
  assert squad_metrics.f1_v2("", "") == 1.0
  assert squad_metrics.f1_v2("a", "") == 1.0  # "a" normalises to nothing too.
  assert squad_metrics.f1_v2("x", "") == 0.0


def test_v2_headline_as_the_originals_evaluate_v2_by_hand():
  # q1 and q3 have answers, q2 has none; every raw prediction is a span.
  gold = {"q1": ["the cat"], "q2": [], "q3": ["dog"]}
  raw = {"q1": "cat", "q2": "bird", "q3": "a dog"}
  # q1's odds equal the threshold: the original's `score_diff <
  # threshold` does not answer it (with `>` it would be answered, correctly:
  # exact 100). Scores: q1 0 (answerable, ""), q2 1 (""), q3 1.
  at_threshold = squad_metrics.evaluate_v2_original(
      gold, raw, {"q1": 0.5, "q2": 0.7, "q3": -1.0}, threshold=0.5
  )
  assert at_threshold["exact"] == pytest.approx(200 / 3)
  assert at_threshold["f1"] == pytest.approx(200 / 3)
  assert at_threshold["HasAns_exact"] == pytest.approx(50.0)
  assert at_threshold["NoAns_exact"] == pytest.approx(100.0)
  assert at_threshold["null_threshold"] == 0.5
  # A threshold above 1: q3 (odds 1.5) keeps its text "a dog", but the
  # script's na_prob_thresh of 1.0 on the raw odds counts it as predicted
  # unanswerable: 0 instead of 1. q2 (odds 3.0) is "" either way.
  above_one = squad_metrics.evaluate_v2_original(
      gold, raw, {"q1": 0.0, "q2": 3.0, "q3": 1.5}, threshold=2.0
  )
  assert above_one["exact"] == pytest.approx(200 / 3)
  assert above_one["HasAns_exact"] == pytest.approx(50.0)
  plain = squad_metrics.evaluate_v2(
      gold, {"q1": "cat", "q2": "", "q3": "a dog"}
  )
  assert plain["exact"] == pytest.approx(100.0)
  # best_* sweep the raw predictions: with q1, q3 answered and q2 null at
  # odds between 0.0 / 1.5 and 3.0, everything is right.
  assert above_one["best_exact"] == pytest.approx(100.0)
  assert above_one["best_f1_thresh"] == pytest.approx(1.5)
