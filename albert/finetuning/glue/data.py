"""GLUE benchmark TSV files -> `TextExample`s.

Reads the layout `download_glue_data.py` (gluebenchmark.com) writes:

  DATA_DIR/{CoLA,SST-2,MRPC,STS-B,QQP,QNLI,RTE,WNLI}/{train,dev,test}.tsv
  DATA_DIR/MNLI/{train,dev_matched,dev_mismatched,test_matched,
                 test_mismatched}.tsv
  DATA_DIR/diagnostic/diagnostic.tsv   (AX: test only, MNLI labels)

The columns are the ones the processors of the original BERT / ALBERT
`run_classifier.py` read. Files are read as the originals read them: tab
separated, no quoting (QQP and MNLI sentences hold stray `"` characters).
Unlike the originals, a row with the wrong number of columns is an error, not
skipped or misread.
"""

import csv
import dataclasses
import math
import os
from typing import Dict, Iterator, List, Optional, Tuple, Union

from official.errors import InputError
from official.io import files
from albert.finetuning.text_example import TextExample


@dataclasses.dataclass(frozen=True)
class TsvColumns:
  """Where one kind of GLUE file keeps its fields.

  Attributes:
    header: whether the first line is a header (all but CoLA train/dev).
    num_columns: the columns every row has. With a header, rows have as many
      columns as the header, which has at least `num_columns` (MNLI's label
      annotations vary between train and dev).
    text_a: column of the first sentence.
    text_b: column of the second sentence, None for single-sentence tasks.
    label: column of the label (-1: the last), None for unlabeled files.
    index: column whose value goes into the guid (test files; the submission
      needs it), None to use the row number.
  """

  header: bool
  num_columns: int
  text_a: int
  text_b: Optional[int]
  label: Optional[int]
  index: Optional[int]


@dataclasses.dataclass(frozen=True)
class GlueTaskSpec:
  """One GLUE task: its files, labels, metrics and submission names.

  Attributes:
    name: the name GLUE uses ("SST-2"), for messages.
    directory: the task's directory under DATA_DIR.
    labels: the label strings (class index = position), None for STS-B
      (regression on a 0-5 score).
    splits: split name -> file name inside `directory`.
    eval_splits: the labeled splits to evaluate on (dev).
    predict_splits: the unlabeled splits to predict for a submission (test).
    metric_names: the keys `glue_metrics` returns for this task.
    submission_files: predict split -> file name the GLUE server expects.
    labeled_columns: column layout of train and dev files (None for AX).
    test_columns: column layout of test files.
    model_task: the task whose fine-tuned model makes the predictions
      ("mnli" for AX, else the task itself).
  """

  name: str
  directory: str
  labels: Optional[Tuple[str, ...]]
  splits: Dict[str, str]
  eval_splits: Tuple[str, ...]
  predict_splits: Tuple[str, ...]
  metric_names: Tuple[str, ...]
  submission_files: Dict[str, str]
  labeled_columns: Optional[TsvColumns]
  test_columns: TsvColumns
  model_task: str

  @property
  def is_regression(self) -> bool:
    return self.labels is None


_BINARY = ("0", "1")
_NLI = ("entailment", "not_entailment")
_MNLI = ("contradiction", "entailment", "neutral")
_SPLITS = {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"}
_ACCURACY = ("accuracy",)
_ACCURACY_F1 = ("accuracy", "f1", "accuracy_and_f1")
# Pair tasks whose files are: header, index, sentence 1, sentence 2[, label].
_PAIR = TsvColumns(
    header=True, num_columns=4, text_a=1, text_b=2, label=3, index=None
)
_PAIR_TEST = TsvColumns(
    header=True, num_columns=3, text_a=1, text_b=2, label=None, index=0
)


def _task(
    name: str,
    labels: Optional[Tuple[str, ...]],
    metric_names: Tuple[str, ...],
    labeled_columns: TsvColumns,
    test_columns: TsvColumns,
) -> GlueTaskSpec:
  """A task with the usual train/dev/test files in a directory `name`."""
  return GlueTaskSpec(
      name=name,
      directory=name,
      labels=labels,
      splits=dict(_SPLITS),
      eval_splits=("dev",),
      predict_splits=("test",),
      metric_names=metric_names,
      submission_files={"test": f"{name}.tsv"},
      labeled_columns=labeled_columns,
      test_columns=test_columns,
      model_task=name.lower().replace("-", ""),
  )


GLUE_TASKS: Dict[str, GlueTaskSpec] = {
    "cola": _task(
        "CoLA",
        _BINARY,
        ("accuracy", "mcc"),
        # No header: source, label, original label, sentence.
        TsvColumns(
            header=False,
            num_columns=4,
            text_a=3,
            text_b=None,
            label=1,
            index=None,
        ),
        TsvColumns(
            header=True,
            num_columns=2,
            text_a=1,
            text_b=None,
            label=None,
            index=0,
        ),
    ),
    "sst2": _task(
        "SST-2",
        _BINARY,
        _ACCURACY,
        TsvColumns(
            header=True,
            num_columns=2,
            text_a=0,
            text_b=None,
            label=1,
            index=None,
        ),
        TsvColumns(
            header=True,
            num_columns=2,
            text_a=1,
            text_b=None,
            label=None,
            index=0,
        ),
    ),
    "mrpc": _task(
        "MRPC",
        _BINARY,
        _ACCURACY_F1,
        # Quality, #1 ID, #2 ID, #1 String, #2 String (test: index, ...).
        TsvColumns(
            header=True, num_columns=5, text_a=3, text_b=4, label=0, index=None
        ),
        TsvColumns(
            header=True, num_columns=5, text_a=3, text_b=4, label=None, index=0
        ),
    ),
    "stsb": _task(
        "STS-B",
        None,
        ("pearson", "spearman", "corr"),
        TsvColumns(
            header=True,
            num_columns=10,
            text_a=7,
            text_b=8,
            label=-1,
            index=None,
        ),
        TsvColumns(
            header=True, num_columns=9, text_a=7, text_b=8, label=None, index=0
        ),
    ),
    "qqp": _task(
        "QQP",
        _BINARY,
        _ACCURACY_F1,
        # id, qid1, qid2, question1, question2, is_duplicate.
        TsvColumns(
            header=True, num_columns=6, text_a=3, text_b=4, label=5, index=None
        ),
        TsvColumns(
            header=True, num_columns=3, text_a=1, text_b=2, label=None, index=0
        ),
    ),
    "mnli": GlueTaskSpec(
        name="MNLI",
        directory="MNLI",
        labels=_MNLI,
        splits={
            "train": "train.tsv",
            "dev_matched": "dev_matched.tsv",
            "dev_mismatched": "dev_mismatched.tsv",
            "test_matched": "test_matched.tsv",
            "test_mismatched": "test_mismatched.tsv",
        },
        eval_splits=("dev_matched", "dev_mismatched"),
        predict_splits=("test_matched", "test_mismatched"),
        metric_names=_ACCURACY,
        submission_files={
            "test_matched": "MNLI-m.tsv",
            "test_mismatched": "MNLI-mm.tsv",
        },
        # Sentences in columns 8 and 9; gold label last (train has 12
        # columns, dev 16 with the five annotator labels).
        labeled_columns=TsvColumns(
            header=True,
            num_columns=11,
            text_a=8,
            text_b=9,
            label=-1,
            index=None,
        ),
        test_columns=TsvColumns(
            header=True, num_columns=10, text_a=8, text_b=9, label=None, index=0
        ),
        model_task="mnli",
    ),
    "qnli": _task("QNLI", _NLI, _ACCURACY, _PAIR, _PAIR_TEST),
    "rte": _task("RTE", _NLI, _ACCURACY, _PAIR, _PAIR_TEST),
    "wnli": _task("WNLI", _BINARY, _ACCURACY, _PAIR, _PAIR_TEST),
    # The diagnostic set: index, sentence1, sentence2. GLUE scores it with
    # Matthews correlation over the three MNLI classes.
    "ax": GlueTaskSpec(
        name="AX",
        directory="diagnostic",
        labels=_MNLI,
        splits={"test": "diagnostic.tsv"},
        eval_splits=(),
        predict_splits=("test",),
        metric_names=("accuracy", "mcc"),
        submission_files={"test": "AX.tsv"},
        labeled_columns=None,
        test_columns=_PAIR_TEST,
        model_task="mnli",
    ),
}


def get_glue_task(task: str) -> GlueTaskSpec:
  """The spec of `task`: a key of GLUE_TASKS, or its GLUE name ("SST-2")."""
  key = task.lower().replace("-", "")
  if key not in GLUE_TASKS:
    raise InputError(
        f"unknown GLUE task {task!r}; known tasks: {', '.join(GLUE_TASKS)}"
    )
  return GLUE_TASKS[key]


def glue_file(task: str, data_dir: str, split: str) -> str:
  """The path of `split` of `task` in the GLUE layout under `data_dir`."""
  spec = get_glue_task(task)
  if split not in spec.splits:
    raise InputError(
        f"GLUE {spec.name} has no split {split!r}; its splits "
        f"are {', '.join(spec.splits)}"
    )
  return os.path.join(data_dir, spec.directory, spec.splits[split])


def read_glue(task: str, data_dir: str, split: str) -> List[TextExample]:
  """Reads one split of a GLUE task, in file order.

  Args:
    task: a key of GLUE_TASKS ("mrpc") or the GLUE name ("MRPC").
    data_dir: the directory `download_glue_data.py` wrote.
    split: a key of the task's `splits`.

  Returns:
    The examples; guid "{split}-{index}" with the file's index column for
    test files and the 0-based row number otherwise. Labels are strings from
    the spec's `labels`, floats for STS-B, None for test files.

  Raises:
    InputError: unknown task or split, missing file, or a malformed row (the
      message names the file and line).
  """
  spec = get_glue_task(task)
  path = glue_file(task, data_dir, split)
  if not files.isfile(path):
    raise InputError(
        f"{path}: no such file; the GLUE layout (download_glue_data.py) "
        f"keeps it at DATA_DIR/{spec.directory}/{spec.splits[split]}"
    )
  columns = (
      spec.test_columns
      if split in spec.predict_splits
      else spec.labeled_columns
  )
  what = f"is this the GLUE {spec.name} {spec.splits[split]}?"
  examples = []
  for line, row, num_columns in _rows(path, columns, what):
    where = f"{path}:{line}"
    if len(row) != num_columns:
      raise InputError(
          f"{where}: expected {num_columns} tab-separated "
          f"columns, found {len(row)}; {what}"
      )
    index = row[columns.index] if columns.index is not None else len(examples)
    examples.append(
        TextExample(
            guid=f"{split}-{index}",
            text_a=row[columns.text_a],
            text_b=row[columns.text_b] if columns.text_b is not None else None,
            label=(
                _label(spec, row[columns.label], where, what)
                if columns.label is not None
                else None
            ),
        )
    )
  if not examples:
    raise InputError(f"{path}: no examples; {what}")
  return examples


def _rows(
    path: str, columns: TsvColumns, what: str
) -> Iterator[Tuple[int, List[str], int]]:
  """Yields (line number, fields, expected column count) for each data row.

  Blank lines are skipped. The header, if any, is checked and not yielded.
  """
  num_columns = columns.num_columns
  header_pending = columns.header
  try:
    with files.open_text(path, newline="") as f:
      reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
      for row in reader:
        if not row:
          continue
        if header_pending:
          if len(row) < num_columns:
            raise InputError(
                f"{path}:{reader.line_num}: the header has {len(row)} "
                f"tab-separated columns, expected at least {num_columns}; "
                f"{what}"
            )
          num_columns = len(row)
          header_pending = False
          continue
        yield reader.line_num, row, num_columns
  except UnicodeDecodeError as e:
    raise InputError(f"{path}: not UTF-8 text ({e}); {what}") from None
  except csv.Error as e:
    raise InputError(f"{path}: {e}; {what}") from None


def _label(
    spec: GlueTaskSpec, value: str, where: str, what: str
) -> Union[str, float]:
  """The label of one row: a label string, or a float score for STS-B."""
  if spec.is_regression:
    try:
      score = float(value)
    except ValueError:
      score = math.nan
    if not math.isfinite(score):
      raise InputError(f"{where}: score {value!r} is not a number; {what}")
    return score
  if value not in spec.labels:
    raise InputError(
        f"{where}: label {value!r} is not one of {spec.labels}; {what}"
    )
  return value
