"""`SquadExample`s read from the official SQuAD v1.1 / v2.0 JSON files.

The context is split into words on whitespace exactly as BERT's
`run_squad.read_squad_examples` does (Devlin et al., 2019; the original ALBERT
keeps the same reader): `doc_tokens` are the words and `char_to_word_offset`
maps every character of the context to the word it belongs to (or to the
preceding word, for whitespace). An answer's character span is mapped to its
first and last word through that table.

Bad input is one line naming the file and the question id. As in the
original, a training answer whose text is not found at its `answer_start`
(after whitespace clean-up) is skipped and counted in a warning.
"""

import dataclasses
import json
from typing import Any, Dict, List, Sequence, Tuple

from absl import logging
import tensorflow as tf

from official.errors import InputError
from official.errors import first_line
from official.io import files

# BERT's whitespace set for SQuAD contexts (U+202F is the narrow no-break
# space that occurs in a few SQuAD paragraphs).
_WHITESPACE = frozenset(" \t\r\n\u202f")


@dataclasses.dataclass
class SquadExample:
  """One question about one paragraph.

  Attributes:
    qas_id: the question's `id`.
    question_text: the question, as in the file.
    context_text: the paragraph, as in the file.
    doc_tokens: the paragraph's whitespace-separated words.
    char_to_word_offset: for each character of `context_text`, the index of
      its word in `doc_tokens` (whitespace maps to the word before it, -1
      before the first word).
    answer_texts: every gold answer text (empty if unanswerable).
    orig_answer_text: the answer trained on (the first one; "" if none).
    answer_start: its first character in `context_text` (-1 if none).
    start_position, end_position: first and last word of that answer in
      `doc_tokens` (-1 if unanswerable or not a training example).
    is_impossible: the v2.0 flag (False for v1.1).
  """

  qas_id: str
  question_text: str
  context_text: str
  doc_tokens: List[str]
  char_to_word_offset: List[int]
  answer_texts: List[str]
  orig_answer_text: str = ""
  answer_start: int = -1
  start_position: int = -1
  end_position: int = -1
  is_impossible: bool = False


def split_words(text: str) -> Tuple[List[str], List[int]]:
  """BERT's whitespace split: (words, word index of every character)."""
  words, char_to_word = [], []
  prev_is_whitespace = True
  for c in text:
    if c in _WHITESPACE:
      prev_is_whitespace = True
    else:
      if prev_is_whitespace:
        words.append(c)
      else:
        words[-1] += c
      prev_is_whitespace = False
    char_to_word.append(len(words) - 1)
  return words, char_to_word


def _get(obj: Any, key: str, kind: type, where: str, path: str):
  """obj[key] checked to be of type `kind`, else a one-line InputError."""
  if not isinstance(obj, dict) or key not in obj:
    raise InputError(
        f'{path}: {where} has no "{key}" key; the file must '
        "follow the official SQuAD JSON format"
    )
  value = obj[key]
  if kind is int and isinstance(value, bool) or not isinstance(value, kind):
    raise InputError(
        f'{path}: {where} has "{key}" of type '
        f"{type(value).__name__}, expected "
        f"{getattr(kind, '__name__', 'str')}; "
        "fix the file"
    )
  return value


def load_json(path: str) -> Dict[str, Any]:
  """The parsed file; InputError for unreadable or invalid JSON."""
  try:
    with files.open_text(path) as f:
      return json.load(f)
  except (OSError, tf.errors.OpError) as e:
    raise InputError(
        f"cannot read SQuAD file {path}: "
        f"{getattr(e, 'strerror', None) or first_line(e)}; check the path"
    ) from None
  except UnicodeDecodeError as e:
    raise InputError(
        f"{path}: not valid UTF-8 ({e.reason}); convert the file to UTF-8"
    ) from None
  except json.JSONDecodeError as e:
    raise InputError(
        f"{path}: invalid JSON at line {e.lineno} column "
        f"{e.colno} ({e.msg}); fix the file"
    ) from None


def _training_span(
    example: SquadExample, answer: Dict[str, Any], path: str, where: str
) -> bool:
  """Sets the word span of `answer`; False if its text is not at its start."""
  text = _get(answer, "text", str, where, path)
  start = _get(answer, "answer_start", int, where, path)
  context = example.context_text
  if not text or start < 0 or start + len(text) > len(context):
    raise InputError(
        f"{path}: {where} has answer_start={start} with a "
        f"{len(text)}-character answer outside its {len(context)}-character "
        "context; fix the answer_start"
    )
  first = example.char_to_word_offset[start]
  last = example.char_to_word_offset[start + len(text) - 1]
  actual = " ".join(example.doc_tokens[max(first, 0) : last + 1])
  if actual.find(" ".join(text.split())) == -1:
    return False
  example.orig_answer_text = text
  example.answer_start = start
  example.start_position, example.end_position = max(first, 0), last
  return True


def read_squad_examples(path: str, training: bool) -> List[SquadExample]:
  """Every question of a SQuAD v1.1 / v2.0 file, in file order.

  Args:
    path: the official JSON file (`{"version", "data": [...]}`).
    training: set the word span of the first answer of each answerable
      question (and skip those whose text is not at `answer_start`).

  Raises:
    InputError: unreadable or invalid file, missing keys, an answerable
      training question without answers, an answer outside its context.
  """
  data = _get(load_json(path), "data", list, "the top level", path)
  examples, skipped = [], 0
  for a, article in enumerate(data):
    for p, paragraph in enumerate(
        _get(article, "paragraphs", list, f"article {a}", path)
    ):
      where = f"article {a} paragraph {p}"
      context = _get(paragraph, "context", str, where, path)
      words, char_to_word = split_words(context)
      for qa in _get(paragraph, "qas", list, where, path):
        qas_id = str(_get(qa, "id", (str, int), f"a question of {where}", path))
        where_q = f"question id {qas_id}"
        answers = _get(qa, "answers", list, where_q, path)
        example = SquadExample(
            qas_id=qas_id,
            question_text=_get(qa, "question", str, where_q, path),
            context_text=context,
            doc_tokens=words,
            char_to_word_offset=char_to_word,
            answer_texts=[_get(x, "text", str, where_q, path) for x in answers],
            is_impossible=bool(qa.get("is_impossible", False)),
        )
        if training and not example.is_impossible:
          if not answers:
            raise InputError(
                f"{path}: {where_q} has no answers and is not "
                "is_impossible; add an answer or set "
                '"is_impossible": true'
            )
          if not _training_span(example, answers[0], path, where_q):
            skipped += 1
            continue
        examples.append(example)
  if skipped:
    logging.warning(
        "%s: skipped %d training questions whose answer text is "
        "not at answer_start",
        path,
        skipped,
    )
  logging.info("%s: %d questions", path, len(examples))
  return examples


def gold_answers(examples: Sequence[SquadExample]) -> Dict[str, List[str]]:
  """qas_id -> gold answer texts (the official scripts' view)."""
  return {e.qas_id: list(e.answer_texts) for e in examples}
