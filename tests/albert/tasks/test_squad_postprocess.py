"""Span decoding: n-best, context and max-context rules, original text, odds."""

import json

import numpy as np
import pytest

from albert.tasks import squad_postprocess
from albert.tasks.squad_data import SquadExample, split_words
from albert.tasks.squad_features import SquadFeature

T = 9
CONTEXT = "The Eiffel  Tower is in Paris, France."


def _example():
  words, offsets = split_words(CONTEXT)
  return SquadExample(
      qas_id="q",
      question_text="?",
      context_text=CONTEXT,
      doc_tokens=words,
      char_to_word_offset=offsets,
      answer_texts=["Eiffel Tower"],
  )


def _feature(uid, token_to_word, max_context):
  z = np.zeros(T, np.int32)
  return SquadFeature(
      uid, 0, uid, z, z, z, z, 0, 0, 0, token_to_word, max_context
  )


def _windows():
  # Window A: words 0..3 at positions 3..7 ("Eiffel" is two pieces, 4 and 5).
  a = _feature(
      0,
      {3: 0, 4: 1, 5: 1, 6: 2, 7: 3},
      {3: True, 4: True, 5: True, 6: False, 7: False},
  )
  # Window B: words 2..6 at positions 3..7.
  b = _feature(
      1,
      {3: 2, 4: 3, 5: 4, 6: 5, 7: 6},
      {3: True, 4: True, 5: True, 6: True, 7: True},
  )
  return [a, b]


def _logits(**values):
  x = np.full(T, -5.0, np.float32)
  for pos, v in values.items():
    x[int(pos[1:])] = v
  return x


def _v1_results():
  return {
      0: {
          "start_logits": _logits(p0=1.0, p4=5.0, p7=9.0),  # p7: not max ctx
          "end_logits": _logits(p0=1.0, p6=4.0, p2=8.0),
      },  # p2: the query
      1: {
          "start_logits": _logits(p0=0.5, p6=3.0),
          "end_logits": _logits(p0=0.5, p7=3.0),
      },
  }


def test_v1_best_span_is_the_original_words():
  post = squad_postprocess.SquadPostprocessor(
      n_best_size=20, max_answer_length=30
  )
  preds, nbest, odds = post([_example()], _windows(), _v1_results())
  # Best valid: A start 4 (5.0) .. end 6 (4.0) = 9 -> words 1..2 with the
  # original casing; the double space becomes one.
  assert preds == {"q": "Eiffel Tower"}
  top = nbest["q"][0]
  assert (top["start_word"], top["end_word"]) == (1, 2)
  assert top["start_score"] + top["end_score"] == pytest.approx(9.0)
  texts = [e["text"] for e in nbest["q"]]
  assert texts[1] == "Paris, France."  # B: 3 + 3 = 6.
  assert len(texts) == len(set(texts))
  assert sum(e["probability"] for e in nbest["q"]) == pytest.approx(1.0)
  # Null score = min(1 + 1, 0.5 + 0.5) = 1; odds = 1 - 9.
  assert odds == {"q": pytest.approx(-8.0)}


def test_max_answer_length_and_n_best():
  post = squad_postprocess.SquadPostprocessor(
      n_best_size=1, max_answer_length=2
  )
  preds, nbest, _ = post([_example()], _windows(), _v1_results())
  # Spans 4..6 (3 tokens) are too long; with one start and one end per
  # window only B's 6..7 survives.
  assert preds == {"q": "Paris, France."} and len(nbest["q"]) == 1


def test_xlnet_beam_and_cls_odds():
  a, b = _windows()
  results = {
      0: {
          "start_top_log_probs": np.log([0.6, 0.3]),
          "start_top_index": np.array([4, 7]),  # 7: not max context
          "end_top_log_probs": np.log([[0.5, 0.4], [0.9, 0.1]]),
          "end_top_index": np.array([[6, 3], [7, 7]]),  # 3 < 4: invalid
          "cls_logits": np.float32(2.0),
      },
      1: {
          "start_top_log_probs": np.log([0.7, 0.2]),
          "start_top_index": np.array([6, 0]),  # 0 = [CLS]: no span
          "end_top_log_probs": np.log([[0.2, 0.1], [0.9, 0.1]]),
          "end_top_index": np.array([[7, 6], [0, 0]]),
          "cls_logits": np.float32(-1.0),
      },
  }
  post = squad_postprocess.SquadPostprocessor()
  preds, nbest, odds = post([_example()], [a, b], results)
  # Candidates: A (4, 6) .6 * .5 = .30; B (6, 7) .14, (6, 6) .07.
  assert [e["text"] for e in nbest["q"]] == [
      "Eiffel Tower",
      "Paris, France.",
      "Paris,",
  ]
  assert np.exp(nbest["q"][0]["start_score"] + nbest["q"][0]["end_score"]) == (
      pytest.approx(0.30)
  )
  assert preds["q"] == "Eiffel Tower"
  assert odds == {"q": -1.0}  # The minimum answerability logit.


def test_no_valid_span_gives_empty_text_and_high_odds():
  post = squad_postprocess.SquadPostprocessor()
  results = {0: {"start_logits": _logits(p0=9.0), "end_logits": _logits()}}
  a = _windows()[0]
  a.token_to_word = {}
  preds, _, odds = post([_example()], [a], results)
  assert preds == {"q": ""} and odds["q"] == squad_postprocess.NO_SPAN_ODDS


def test_threshold_and_files(tmp_path):
  preds = {"a": "x", "b": "y"}
  odds = {"a": 0.5, "b": -0.5}
  assert squad_postprocess.apply_null_threshold(preds, odds, 0.0) == {
      "a": "",
      "b": "y",
  }
  paths = squad_postprocess.write_prediction_files(
      str(tmp_path / "out"), preds, {"a": []}, odds
  )
  assert [p.rsplit("/", 1)[1] for p in paths] == [
      "predictions.json",
      "nbest_predictions.json",
      "null_odds.json",
  ]
  assert json.loads(open(paths[0]).read()) == preds
  assert json.loads(open(paths[2]).read()) == odds
  assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
      p.rsplit("/", 1)[1] for p in paths
  )  # No temporary files left.
