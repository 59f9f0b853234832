"""SQuAD JSON reader: BERT's whitespace words, answer spans, one-line errors."""

import json

import pytest

from official.errors import InputError
from albert.finetuning.squad import data as squad_data


def _write(tmp_path, obj, name="train.json"):
  path = tmp_path / name
  path.write_text(
      obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8"
  )
  return str(path)


def _squad(qas, context="The  quick brown\tfox, jumped.", version="1.1"):
  return {
      "version": version,
      "data": [
          {"title": "t", "paragraphs": [{"context": context, "qas": qas}]}
      ],
  }


def test_split_words_matches_hand_offsets():
  words, offsets = squad_data.split_words(" ab  c\nd ")
  assert words == ["ab", "c", "d"]
  # " a b _ _ c \n d _" -> -1, 0, 0, 0, 0, 1, 1, 2, 2
  assert offsets == [-1, 0, 0, 0, 0, 1, 1, 2, 2]


def test_answer_word_span_and_all_gold_answers(tmp_path):
  context = "The  quick brown\tfox, jumped."
  qas = [
      {
          "id": "q1",
          "question": "Who jumped?",
          "answers": [
              {"text": "brown\tfox,", "answer_start": 11},
              {"text": "fox", "answer_start": 17},
          ],
      }
  ]
  path = _write(tmp_path, _squad(qas, context))
  (ex,) = squad_data.read_squad_examples(path, training=True)
  assert ex.doc_tokens == ["The", "quick", "brown", "fox,", "jumped."]
  assert (ex.start_position, ex.end_position) == (2, 3)
  assert ex.orig_answer_text == "brown\tfox,"
  assert ex.answer_texts == ["brown\tfox,", "fox"]
  assert not ex.is_impossible
  assert squad_data.gold_answers([ex]) == {"q1": ["brown\tfox,", "fox"]}


def test_v2_impossible_question_has_no_span(tmp_path):
  qas = [
      {
          "id": "q2",
          "question": "Why?",
          "answers": [],
          "is_impossible": True,
          "plausible_answers": [{"text": "quick", "answer_start": 5}],
      }
  ]
  path = _write(tmp_path, _squad(qas, version="v2.0"))
  (ex,) = squad_data.read_squad_examples(path, training=True)
  assert ex.is_impossible and ex.answer_texts == []
  assert (ex.start_position, ex.end_position) == (-1, -1)


def test_misplaced_answer_is_skipped_in_training_only(tmp_path):
  qas = [
      {
          "id": "bad",
          "question": "?",
          "answers": [{"text": "quick", "answer_start": 0}],
      },
      {
          "id": "good",
          "question": "?",
          "answers": [{"text": "quick", "answer_start": 5}],
      },
  ]
  path = _write(tmp_path, _squad(qas))
  train = squad_data.read_squad_examples(path, training=True)
  assert [e.qas_id for e in train] == ["good"]
  dev = squad_data.read_squad_examples(path, training=False)
  assert [e.qas_id for e in dev] == ["bad", "good"]
  assert dev[0].start_position == -1  # No spans outside training.


@pytest.mark.parametrize(
    "qas,needle",
    [
        (
            [
                {
                    "id": "q9",
                    "question": "?",
                    "answers": [{"text": "fox", "answer_start": 99}],
                }
            ],
            "question id q9 has answer_start=99",
        ),
        ([{"id": "q8", "answers": []}], 'question id q8 has no "question" key'),
        (
            [{"id": "q7", "question": "?", "answers": []}],
            "question id q7 has no answers",
        ),
        (
            [{"id": "q6", "question": "?", "answers": [{"text": "fox"}]}],
            'question id q6 has no "answer_start" key',
        ),
    ],
)
def test_errors_are_one_line_with_file_and_id(tmp_path, qas, needle):
  path = _write(tmp_path, _squad(qas))
  with pytest.raises(InputError) as e:
    squad_data.read_squad_examples(path, training=True)
  message = str(e.value)
  assert "\n" not in message and path in message and needle in message


def test_invalid_json_names_line_and_column(tmp_path):
  path = _write(tmp_path, '{"data": [\n  {"title": }\n]}')
  with pytest.raises(InputError, match=r"invalid JSON at line 2 column 13"):
    squad_data.read_squad_examples(path, training=False)


def test_missing_file(tmp_path):
  with pytest.raises(InputError, match="cannot read SQuAD file"):
    squad_data.read_squad_examples(str(tmp_path / "nope.json"), training=False)
