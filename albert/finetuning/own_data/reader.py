"""The user's own files -> `TextExample`s: CSV, TSV or JSON Lines.

`DATA_DIR/{train,dev,test}.{csv,tsv,jsonl}`: the extension picks the format
(`.json` is read as JSON Lines too). CSV and TSV files start with a header
row and follow Python's `csv` module (RFC 4180 quoting: a field holding the
delimiter, a quote or a line break is quoted, as pandas' `to_csv` writes it).
JSON Lines hold one object per line (rows: `official/io/table_rows.py`).
Columns are found by name: a text
column, an optional second text column for sentence pairs, a label column
(optional in `test`) and an optional id column (else the row number).
Every problem is reported with the file and line it is on.
"""

import csv
import dataclasses
import json
import math
import os
from typing import (
    Any,
    Callable,
    Dict,
    List,
    Optional,
    Sequence,
    Tuple,
)

from official.errors import InputError
from official.io import atomic_write
from official.io import files
from official.io.table_rows import EXTENSIONS
from official.io.table_rows import read_all_rows
from albert.finetuning.text_example import TextExample


@dataclasses.dataclass(frozen=True)
class Columns:
  """The column names of a text classification or regression file.

  Attributes:
    text: the text (first sentence).
    text_pair: the second sentence of a pair task; used when the training
      file has it.
    label: the label (a string, or a number for regression).
    id: a column to identify rows in prediction files; else the row number.
  """

  text: str = "text"
  text_pair: str = "text_pair"
  label: str = "label"
  id: str = "id"


def find_split_file(
    data_dir: str, split: str, extensions: Sequence[str] = EXTENSIONS
) -> Optional[str]:
  """DATA_DIR/split.EXT for one of `extensions` (CSV, TSV, JSON Lines by
  default), None if there is none.

  Raises InputError when two files of the split exist (which one is meant
  is unclear).
  """
  found = [
      os.path.join(data_dir, split + ext)
      for ext in extensions
      if files.isfile(os.path.join(data_dir, split + ext))
  ]
  if len(found) > 1:
    raise InputError(
        f"{data_dir}: both {' and '.join(os.path.basename(f) for f in found)}"
        f" hold the {split} split; keep one"
    )
  return found[0] if found else None


def require_split_file(
    data_dir: str,
    split: str,
    *,
    task: str,
    hint: str,
    extensions: Sequence[str] = EXTENSIONS,
) -> str:
  """`find_split_file`, or InputError: `TASK: no train.csv, train.tsv, ...
  in DATA_DIR; HINT`."""
  path = find_split_file(data_dir, split, extensions)
  if path is None:
    raise InputError(
        f"{task}: no {split_file_names(split, extensions)} in {data_dir}; "
        f"{hint}"
    )
  return path


def split_file_names(split: str, extensions: Sequence[str] = EXTENSIONS) -> str:
  """`train.csv, train.tsv, train.jsonl or train.json`: what
  `find_split_file` looks for, for messages."""
  names = [split + ext for ext in extensions]
  return ", ".join(names[:-1]) + " or " + names[-1]


def read_text_examples(
    path: str,
    columns: Columns,
    *,
    pair: Optional[bool],
    labeled: bool,
    regression: bool,
    label_parser: Optional[Callable[[str, int, Any, bool], Any]] = None,
) -> Tuple[List[TextExample], bool]:
  """The examples of one file.

  Args:
    path: a CSV, TSV or JSON Lines file.
    columns: where the fields are.
    pair: whether examples are sentence pairs; None to decide from the file
      (the training file decides).
    labeled: whether every row must have a label (train, dev); for test,
      labels are read when the column is present.
    regression: labels are numbers (else strings).
    label_parser: (path, line number, raw value, labeled) -> the label, or
      None when the row has none; instead of the string / number rule
      (e.g. multi-label sets).

  Returns:
    (examples, pair).
  """
  rows, keys = read_all_rows(path)
  if columns.text not in keys:
    raise InputError(
        f"{path}: no {columns.text!r} column (it has {', '.join(sorted(keys))})"
        "; rename the column or set the task's text_column"
    )
  has_pair = columns.text_pair in keys
  if pair is None:
    pair = has_pair
  elif pair and not has_pair:
    raise InputError(
        f"{path}: no {columns.text_pair!r} column, but the training file has "
        "sentence pairs; add the second sentence of each example"
    )
  has_label = columns.label in keys
  if labeled and not has_label:
    raise InputError(
        f"{path}: no {columns.label!r} column (it has "
        f"{', '.join(sorted(keys))}); rename the column or set the task's "
        "label_column"
    )
  examples = []
  seen_ids = {}
  for index, (number, row) in enumerate(rows):
    text = text_value(path, number, row, columns.text)
    text_b = text_value(path, number, row, columns.text_pair) if pair else None
    label = None
    if has_label:
      if label_parser is not None:
        label = label_parser(path, number, row.get(columns.label), labeled)
      else:
        label = label_value(
            path, number, row.get(columns.label), columns.label, regression
        )
      if label is None and labeled:
        raise InputError(
            f"{path} line {number}: the {columns.label!r} field is empty; "
            "give every training and dev example a label"
        )
    guid = row_id(
        path, number, row, index, column=columns.id, keys=keys, seen=seen_ids
    )
    examples.append(
        TextExample(guid=guid, text_a=text, text_b=text_b, label=label)
    )
  return examples, pair


def row_id(path, number, row, index, *, column, keys, seen) -> str:
  """The id of row `index` (on line `number`): its `column` value when the
  file has that column (`keys`), else the row number; InputError for an id
  an earlier row has (`seen`: id -> line, updated here)."""
  if column not in keys:
    return str(index)
  value = row.get(column)
  guid = "" if value is None else str(value)
  if guid in seen:
    raise InputError(
        f"{path} line {number}: id {guid!r} is also on line "
        f"{seen[guid]}; ids must be unique"
    )
  seen[guid] = number
  return guid


def text_value(path: str, number: int, row: Dict[str, Any], column: str) -> str:
  """The string in `column` of a row; InputError if it is missing or not a
  string."""
  value = row.get(column)
  if value is None:
    raise InputError(
        f"{path} line {number}: no {column!r} value; every row needs one"
    )
  if not isinstance(value, str):
    raise InputError(
        f"{path} line {number}: {column!r} is a JSON "
        f"{type(value).__name__}, not a string"
    )
  return value


def label_value(path, number, value, column, regression):
  """A label string, a float for regression, or None when empty."""
  if value is None or (isinstance(value, str) and not value.strip()):
    return None
  if regression:
    try:
      score = float(value)
    except (TypeError, ValueError):
      score = math.nan
    if isinstance(value, bool) or not math.isfinite(score):
      raise InputError(
          f"{path} line {number}: {column!r} is {value!r}, not a finite "
          "number; regression needs numeric labels"
      )
    return score
  if isinstance(value, bool):
    return "true" if value else "false"
  if isinstance(value, (dict, list)):
    raise InputError(
        f"{path} line {number}: {column!r} is a JSON "
        f"{type(value).__name__}; labels are strings or numbers"
    )
  if isinstance(value, float) and value.is_integer():
    value = int(value)
  return str(value).strip()


def write_rows(
    input_path: str, split: str, header, rows, output_dir: str
) -> str:
  """Writes OUTPUT_DIR/SPLIT_predictions.EXT (atomically) in the format of
  the split's input file: JSON Lines objects for .jsonl / .json input, else
  a CSV or TSV file with `header`. Returns its path."""
  ext = os.path.splitext(input_path)[1]
  if ext in (".jsonl", ".json"):
    path = os.path.join(output_dir, f"{split}_predictions.jsonl")
    text = "".join(
        json.dumps(dict(zip(header, row)), ensure_ascii=False) + "\n"
        for row in rows
    )
    atomic_write.write_atomic(path, text)
    return path
  path = os.path.join(output_dir, f"{split}_predictions{ext}")
  with atomic_write.atomic_file(path, newline="", encoding="utf-8") as f:
    writer = csv.writer(f, delimiter="\t" if ext == ".tsv" else ",")
    writer.writerow(header)
    writer.writerows(rows)
  return path
