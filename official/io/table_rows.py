"""Rows of CSV, TSV and JSON Lines files, with every problem reported as
one line naming the file and the line it is on.

The extension picks the format (`.json` is read as JSON Lines too). CSV and
TSV files start with a header row and follow Python's `csv` module (RFC 4180
quoting); a byte-order mark, as spreadsheet programs write, is skipped. JSON
Lines hold one object per line. Fine-tuning's own-data reader and
albert-embed's texts reader share these.
"""

import csv
import json
from typing import Any, Dict, Iterator, List, Tuple

from official.errors import InputError
from official.io import files

EXTENSIONS = (".csv", ".tsv", ".jsonl", ".json")


def read_rows(path: str) -> Iterator[Tuple[int, Dict[str, Any]]]:
  """(line number, row dict) of a CSV, TSV or JSON Lines file.

  CSV/TSV values are strings (missing trailing fields are None); JSON Lines
  values keep their JSON types.
  """
  if path.endswith((".jsonl", ".json")):
    with files.open_text(path, encoding="utf-8-sig") as f:
      for number, line in enumerate(f, 1):
        if not line.strip():
          continue
        try:
          row = json.loads(line)
        except json.JSONDecodeError as e:
          raise InputError(
              f"{path} line {number}: not JSON ({e.msg}); JSON Lines files "
              "hold one object per line"
          ) from None
        if not isinstance(row, dict):
          raise InputError(
              f"{path} line {number}: a JSON {type(row).__name__}, not an "
              'object; write each row as {"text": ..., "label": ...}'
          )
        yield number, row
    return
  delimiter = "\t" if path.endswith(".tsv") else ","
  # Long documents are one field: lift the csv module's 128 KiB field limit.
  csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))
  # utf-8-sig: files saved by spreadsheet programs start with a BOM.
  with files.open_text(path, encoding="utf-8-sig", newline="") as f:
    reader = csv.DictReader(f, delimiter=delimiter, strict=True)
    try:
      yield from _csv_rows(path, reader)
    except csv.Error as e:  # the reader has not counted the row's lines
      raise InputError(
          f"{path} line {reader.line_num + 1}: {e}; check the quoting of the "
          "row that starts there"
      ) from None


def _csv_rows(path, reader) -> Iterator[Tuple[int, Dict[str, Any]]]:
  if reader.fieldnames is None:
    return  # empty file
  duplicated = sorted(
      {n for n in reader.fieldnames if reader.fieldnames.count(n) > 1}
  )
  if duplicated:
    raise InputError(
        f"{path} line 1: the header names {', '.join(duplicated)} twice; "
        "give every column its own name"
    )
  for row in reader:
    if None in row:  # more fields than the header
      fields = len(reader.fieldnames) + len(row[None])
      raise InputError(
          f"{path} line {reader.line_num}: {fields}"
          f" fields but the header has {len(reader.fieldnames)}; quote "
          "fields that hold the delimiter"
      )
    yield reader.line_num, row


def rows_of(path: str) -> List[Tuple[int, Dict[str, Any]]]:
  """Every (line number, row) of `read_rows`; InputError for a file that is
  not UTF-8."""
  try:
    return list(read_rows(path))
  except UnicodeDecodeError as e:
    raise InputError(
        f"{path}: not UTF-8 ({e.reason} at byte {e.start}); save the file "
        "as UTF-8"
    ) from None


def read_all_rows(
    path: str,
) -> Tuple[List[Tuple[int, Dict[str, Any]]], set]:
  """(`rows_of(path)`, the set of column names); InputError for a file that
  is not UTF-8 or has no rows."""
  rows = rows_of(path)
  if not rows:
    raise InputError(f"{path}: no rows; it needs a header and examples")
  keys = set()
  for _, row in rows:
    keys.update(row)
  return rows, keys
