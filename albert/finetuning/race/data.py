"""RACE (Lai et al., 2017) files -> `MultipleChoiceExample`s.

Reads the layout RACE.tar.gz unpacks to:

  DATA_DIR/{train,dev,test}/{high,middle}/*.txt

Each file is one JSON object, an article with its questions:

  {"id": "high1.txt", "article": "...", "questions": ["...", ...],
   "options": [["...", "...", "...", "..."], ...], "answers": ["A", ...]}
"""

import json
import os
from typing import List, Sequence

from official.errors import InputError
from official.io import files
from albert.finetuning.text_example import MultipleChoiceExample

RACE_SPLITS = ("train", "dev", "test")
RACE_LEVELS = ("middle", "high")
ANSWERS = ("A", "B", "C", "D")  # Option letters; label = position.
_LAYOUT = "the RACE layout is DATA_DIR/{train,dev,test}/{high,middle}/*.txt"


def read_race(
    data_dir: str, split: str, levels: Sequence[str] = RACE_LEVELS
) -> List[MultipleChoiceExample]:
  """Reads one split of RACE: every question of every article, in order.

  Levels are read in the order given, files in sorted name order, questions
  in file order.

  Args:
    data_dir: the unpacked RACE directory.
    split: "train", "dev" or "test".
    levels: any of "middle" and "high".

  Returns:
    One example per question: guid "{split}-{level}-{id}-{question index}",
    context the article, 4 options, label 0..3 from the answer letter,
    group the level.

  Raises:
    InputError: unknown split or level, a missing or empty directory, or a
      malformed file (the message names the file and question).
  """
  if split not in RACE_SPLITS:
    raise InputError(
        f"RACE has no split {split!r}; its splits are "
        f"{', '.join(RACE_SPLITS)}"
    )
  examples = []
  for level in levels:
    if level not in RACE_LEVELS:
      raise InputError(
          f"RACE has no level {level!r}; its levels are "
          f"{', '.join(RACE_LEVELS)}"
      )
    directory = os.path.join(data_dir, split, level)
    if not files.isdir(directory):
      raise InputError(
          f"{directory}: no such directory; {_LAYOUT} (RACE.tar.gz unpacked)"
      )
    names = [n for n in files.listdir(directory) if n.endswith(".txt")]
    if not names:
      raise InputError(f"{directory}: no .txt files; {_LAYOUT}")
    for name in names:
      examples.extend(_read_file(os.path.join(directory, name), split, level))
  return examples


def _read_file(
    path: str, split: str, level: str
) -> List[MultipleChoiceExample]:
  """The examples of one article file."""
  try:
    with files.open_text(path) as f:
      article = json.load(f)
  except json.JSONDecodeError as e:
    raise InputError(
        f"{path}:{e.lineno}:{e.colno}: invalid JSON ({e.msg}); "
        "a RACE file holds one JSON object"
    ) from None
  except UnicodeDecodeError as e:
    raise InputError(f"{path}: not UTF-8 text ({e})") from None
  if not isinstance(article, dict):
    raise InputError(
        f"{path}: expected a JSON object, found {type(article).__name__}"
    )
  for key, kind in (
      ("id", str),
      ("article", str),
      ("questions", list),
      ("options", list),
      ("answers", list),
  ):
    if key not in article:
      raise InputError(
          f"{path}: missing key {key!r}; a RACE file has "
          "id, article, questions, options and answers"
      )
    if not isinstance(article[key], kind):
      raise InputError(
          f"{path}: {key!r} must be a JSON "
          f"{'string' if kind is str else 'list'}"
      )
  questions, options, answers = (
      article["questions"],
      article["options"],
      article["answers"],
  )
  if not len(questions) == len(options) == len(answers):
    raise InputError(
        f"{path}: {len(questions)} questions, {len(options)} "
        f"option lists and {len(answers)} answers; expected "
        "one of each per question"
    )
  examples = []
  for i, (question, choices, answer) in enumerate(
      zip(questions, options, answers)
  ):
    where = f"{path}: question {i}"
    if not isinstance(question, str):
      raise InputError(f"{where}: the question must be a string")
    if (
        not isinstance(choices, list)
        or len(choices) != len(ANSWERS)
        or not all(isinstance(c, str) for c in choices)
    ):
      raise InputError(
          f"{where}: options must be {len(ANSWERS)} strings, "
          f"found {choices!r:.80}"
      )
    if answer not in ANSWERS:
      raise InputError(
          f"{where}: answer {answer!r} is not one of {', '.join(ANSWERS)}"
      )
    examples.append(
        MultipleChoiceExample(
            guid=f"{split}-{level}-{article['id']}-{i}",
            context=article["article"],
            question=question,
            options=tuple(choices),
            label=ANSWERS.index(answer),
            group=level,
        )
    )
  return examples
