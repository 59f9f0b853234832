"""RACE reading (the RACE.tar.gz layout) and per-level accuracy."""

import json
import os
import re

import pytest

from official.errors import InputError
from albert.finetuning.race.data import read_race
from albert.finetuning.race.metrics import race_metrics
from albert.finetuning.text_example import MultipleChoiceExample

OPTIONS = ["in the park", "at school", "at home", "on a bus"]


def _article(article_id, questions, answers):
  return {
      "answers": answers,
      "options": [OPTIONS] * len(questions),
      "questions": questions,
      "article": f"Article {article_id}.",
      "id": article_id,
  }


def _write(path, content):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, "w", encoding="utf-8") as f:
    f.write(content if isinstance(content, str) else json.dumps(content))
  return path


@pytest.fixture
def race_dir(tmp_path):
  # Sorted name order puts high10.txt before high2.txt.
  _write(
      str(tmp_path / "dev/high/high2.txt"),
      _article("high2.txt", ["Where was Tom?"], ["C"]),
  )
  _write(
      str(tmp_path / "dev/high/high10.txt"),
      _article("high10.txt", ["Tom was _ .", "Who is Tom?"], ["A", "D"]),
  )
  _write(
      str(tmp_path / "dev/middle/middle1.txt"),
      _article("middle1.txt", ["Where is Ann?"], ["B"]),
  )
  _write(str(tmp_path / "dev/middle/readme.md"), "not an article")
  return str(tmp_path)


def _example(guid, article_id, question, label, group):
  return MultipleChoiceExample(
      guid=guid,
      context=f"Article {article_id}.",
      question=question,
      options=tuple(OPTIONS),
      label=label,
      group=group,
  )


def test_reads_levels_in_order_and_files_sorted(race_dir):
  assert read_race(race_dir, "dev") == [
      _example(
          "dev-middle-middle1.txt-0",
          "middle1.txt",
          "Where is Ann?",
          1,
          "middle",
      ),
      _example("dev-high-high10.txt-0", "high10.txt", "Tom was _ .", 0, "high"),
      _example("dev-high-high10.txt-1", "high10.txt", "Who is Tom?", 3, "high"),
      _example(
          "dev-high-high2.txt-0", "high2.txt", "Where was Tom?", 2, "high"
      ),
  ]
  assert [e.guid for e in read_race(race_dir, "dev", levels=("high",))] == [
      "dev-high-high10.txt-0",
      "dev-high-high10.txt-1",
      "dev-high-high2.txt-0",
  ]


def _error(race_dir, name, content):
  path = _write(os.path.join(race_dir, "dev", "high", name), content)
  with pytest.raises(InputError) as e:
    read_race(race_dir, "dev")
  return path, str(e.value)


def test_invalid_json_gives_line_and_column(race_dir):
  path, message = _error(
      race_dir, "high3.txt", '{"id": "high3.txt",\n  "article": }'
  )
  assert message == (
      f"{path}:2:14: invalid JSON (Expecting value); a RACE "
      "file holds one JSON object"
  )


def test_missing_key(race_dir):
  article = _article("high3.txt", ["Q?"], ["A"])
  del article["options"]
  path, message = _error(race_dir, "high3.txt", article)
  assert message == (
      f"{path}: missing key 'options'; a RACE file has id, "
      "article, questions, options and answers"
  )


def test_options_must_be_four_strings(race_dir):
  article = _article("high3.txt", ["Q1?", "Q2?"], ["A", "B"])
  article["options"] = [OPTIONS, ["yes", "no", "maybe"]]
  path, message = _error(race_dir, "high3.txt", article)
  assert message == (
      f"{path}: question 1: options must be 4 strings, found "
      "['yes', 'no', 'maybe']"
  )


def test_answer_must_be_a_letter(race_dir):
  path, message = _error(
      race_dir, "high3.txt", _article("high3.txt", ["Q?"], ["E"])
  )
  assert message == f"{path}: question 0: answer 'E' is not one of A, B, C, D"


def test_lengths_must_agree(race_dir):
  article = _article("high3.txt", ["Q1?", "Q2?"], ["A", "B"])
  article["answers"] = ["A"]
  path, message = _error(race_dir, "high3.txt", article)
  assert message == (
      f"{path}: 2 questions, 2 option lists and 1 answers; "
      "expected one of each per question"
  )


def test_missing_directory_states_the_layout(race_dir):
  with pytest.raises(
      InputError,
      match=(
          f"^{re.escape(os.path.join(race_dir, 'train', 'middle'))}: no such "
          r"directory; the RACE layout is DATA_DIR/\{train,dev,test\}/"
          r"\{high,middle\}/\*\.txt \(RACE\.tar\.gz unpacked\)$"
      ),
  ):
    read_race(race_dir, "train")


def test_unknown_split_and_level(race_dir):
  with pytest.raises(
      InputError,
      match=(
          "^RACE has no split 'validation'; its splits are train, dev, test$"
      ),
  ):
    read_race(race_dir, "validation")
  with pytest.raises(
      InputError,
      match=("^RACE has no level 'college'; its levels are middle, high$"),
  ):
    read_race(race_dir, "dev", levels=("college",))


def test_race_metrics_per_level():
  # Correct: items 0, 1 (middle) and 3 (high); wrong: 2 and 4 (high).
  metrics = race_metrics(
      predictions=[0, 1, 2, 3, 0],
      labels=[0, 1, 0, 3, 1],
      groups=["middle", "middle", "high", "high", "high"],
  )
  assert metrics == pytest.approx(
      {"accuracy": 3 / 5, "accuracy_high": 1 / 3, "accuracy_middle": 1.0}
  )


def test_race_metrics_lengths_must_agree():
  with pytest.raises(
      ValueError,
      match=r"groups \(1 values\) and labels "
      r"\(2 values\) must be equally long",
  ):
    race_metrics([0, 1], [0, 1], ["high"])
