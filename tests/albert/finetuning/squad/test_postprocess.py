"""Span decoding: n-best, context and max-context rules, original text, odds."""

import json
import re
import string

import numpy as np
import pytest

from albert.finetuning.squad import data as squad_data
from albert.finetuning.squad import features as squad_features
from albert.finetuning.squad import metrics as squad_metrics
from albert.finetuning.squad import postprocess as squad_postprocess
from albert.finetuning.squad.data import SquadExample, split_words
from albert.finetuning.squad.features import SquadFeature

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


# Characters of the context's tokens: words, and "Eiffel" as "eif" + "fel".
CHARS = {
    "The": (0, 3),
    "Eif": (4, 7),
    "fel": (7, 10),
    "Tower": (12, 17),
    "is": (18, 20),
    "in": (21, 23),
    "Paris,": (24, 30),
    "France.": (31, 38),
}


def _feature(uid, tokens, max_context):
  """Window `uid` with `tokens` (names of CHARS) at positions 3, 4, ..."""
  z = np.zeros(T, np.int32)
  word_of = {
      name: len(CONTEXT[: start + 1].split()) - 1
      for name, (start, _) in CHARS.items()
  }
  return SquadFeature(
      uid,
      0,
      uid,
      z,
      z,
      z,
      z,
      0,
      0,
      0,
      {3 + i: word_of[t] for i, t in enumerate(tokens)},
      dict(zip(range(3, 3 + len(tokens)), max_context)),
      {3 + i: CHARS[t] for i, t in enumerate(tokens)},
  )


def _windows():
  # Window A: The Eif fel Tower is at positions 3..7.
  a = _feature(
      0, ["The", "Eif", "fel", "Tower", "is"], [True] * 3 + [False] * 2
  )
  # Window B: Tower is in Paris, France. at positions 3..7.
  b = _feature(1, ["Tower", "is", "in", "Paris,", "France."], [True] * 5)
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


def test_v1_best_span_is_the_contexts_own_characters():
  post = squad_postprocess.SquadPostprocessor(
      n_best_size=20, max_answer_length=30
  )
  preds, nbest, odds = post([_example()], _windows(), _v1_results())
  # Best valid: A start 4 (5.0) .. end 6 (4.0) = 9 -> characters 4..17 of
  # the context, its casing and its double space as they are.
  assert preds == {"q": "Eiffel  Tower"}
  top = nbest["q"][0]
  assert (top["start_word"], top["end_word"]) == (1, 2)
  assert (top["start_char"], top["end_char"]) == (4, 17)
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
      "Eiffel  Tower",
      "Paris, France.",
      "Paris,",
  ]
  assert np.exp(nbest["q"][0]["start_score"] + nbest["q"][0]["end_score"]) == (
      pytest.approx(0.30)
  )
  assert preds["q"] == "Eiffel  Tower"
  assert odds == {"q": -1.0}  # The minimum answerability logit.


def test_a_span_can_end_inside_a_word():
  # "Eif" ends inside "Eiffel": the answer is those characters, not the
  # whole word (the original's character-exact slice).
  post = squad_postprocess.SquadPostprocessor()
  results = {
      0: {"start_logits": _logits(p4=9.0), "end_logits": _logits(p4=9.0)}
  }
  preds, nbest, _ = post([_example()], _windows()[:1], results)
  assert preds == {"q": "Eif"}
  assert (nbest["q"][0]["start_word"], nbest["q"][0]["end_word"]) == (1, 1)


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
  # Odds equal to the threshold: no answer (the original's `<` answers).
  assert squad_postprocess.apply_null_threshold(preds, odds, 0.5) == {
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


def _official_exact_match(prediction, gold):
  """evaluate-v1.1.py's exact match, written out from the script:
  lower-case, drop punctuation, drop a/an/the, collapse whitespace."""

  def normalize(s):
    s = "".join(c for c in s.lower() if c not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())

  return normalize(prediction) == normalize(gold)


def test_sub_word_answers_are_exact_matches(tmp_path, tokenizer):
  # Answers inside whitespace words: the gold labels' tokens, decoded, give
  # back the answer itself, which the official script counts as an exact
  # match; whole words ("Japan's", "1,000-strong") would not be.
  qas = [
      ("It is Japan's capital and largest city.", "Japan"),
      ("A state-of-the-art design won.", "art"),
      ("The 1,000-strong army crossed.", "1,000"),
      ("Prices rose 2.5-fold in (late) 2019.", "2.5"),
      ("She met the Curies' daughter.", "Curies"),
  ]
  data = {
      "version": "1.1",
      "data": [
          {
              "title": "t",
              "paragraphs": [
                  {
                      "context": context,
                      "qas": [
                          {
                              "id": f"q{k}",
                              "question": "Which?",
                              "answers": [
                                  {
                                      "text": answer,
                                      "answer_start": context.index(answer),
                                  }
                              ],
                          }
                      ],
                  }
                  for k, (context, answer) in enumerate(qas)
              ],
          }
      ],
  }
  path = tmp_path / "train-v1.1.json"
  path.write_text(json.dumps(data))
  examples = squad_data.read_squad_examples(str(path), training=True)
  assert len(examples) == len(qas)
  featurizer = squad_features.SquadFeaturizer(
      tokenizer, seq_length=48, doc_stride=16, max_query_length=8
  )
  features = featurizer.featurize(examples)
  results = {}
  for f in features:  # a model that is sure of the gold span
    start = np.full(48, -10.0, np.float32)
    end = np.full(48, -10.0, np.float32)
    start[f.start_position] = end[f.end_position] = 10.0
    results[f.unique_id] = {"start_logits": start, "end_logits": end}
  preds, nbest, _ = squad_postprocess.SquadPostprocessor()(
      examples, features, results
  )
  gold = {f"q{k}": answer for k, (_, answer) in enumerate(qas)}
  assert preds == gold
  assert all(_official_exact_match(preds[q], gold[q]) for q in gold)
  assert squad_metrics.evaluate_v1({q: [a] for q, a in gold.items()}, preds)[
      "exact_match"
  ] == pytest.approx(100.0)
  # The same spans as whole words miss all but "Curies'" (whose apostrophe
  # the normalisation drops).
  words = {
      q: " ".join(
          examples[k].doc_tokens[
              nbest[q][0]["start_word"] : nbest[q][0]["end_word"] + 1
          ]
      )
      for k, q in enumerate(gold)
  }
  misses = [q for q in gold if not _official_exact_match(words[q], gold[q])]
  assert misses == ["q0", "q1", "q2", "q3"]
