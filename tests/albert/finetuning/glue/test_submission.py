"""GLUE submission files: exact contents, names and failure modes."""

import os

import pytest

from official.errors import InputError
from albert.finetuning.glue.data import read_glue
from albert.finetuning.glue.submission import write_submission


def _read(path):
  with open(path, encoding="utf-8") as f:
    return f.read()


def test_mnli_matched_label_strings(tmp_path):
  out = str(tmp_path / "submission")
  path = write_submission(
      "mnli", "test_matched", ["test_matched-0", "test_matched-7"], [1, 0], out
  )
  assert path == os.path.join(out, "MNLI-m.tsv")
  assert _read(path) == "index\tprediction\n0\tentailment\n7\tcontradiction\n"
  assert os.listdir(out) == ["MNLI-m.tsv"]  # No temporary file left.


def test_binary_and_nli_tasks_and_bare_indices(tmp_path):
  path = write_submission("rte", "test", [3, "4"], [1, 0], str(tmp_path))
  assert os.path.basename(path) == "RTE.tsv"
  assert _read(path) == (
      "index\tprediction\n3\tnot_entailment\n4\tentailment\n"
  )
  path = write_submission(
      "CoLA", "test", ["test-0", "test-1"], [0, 1], str(tmp_path)
  )
  assert _read(path) == "index\tprediction\n0\t0\n1\t1\n"


def test_stsb_scores_clipped_with_three_decimals(tmp_path):
  path = write_submission(
      "stsb", "test", [0, 1, 2], [-0.2, 2.34567, 5.7], str(tmp_path)
  )
  assert os.path.basename(path) == "STS-B.tsv"
  assert _read(path) == "index\tprediction\n0\t0.000\n1\t2.346\n2\t5.000\n"


def test_ax_from_read_glue_guids(tmp_path):
  data = tmp_path / "diagnostic"
  data.mkdir()
  (data / "diagnostic.tsv").write_text(
      "index\tsentence1\tsentence2\n0\ta\tb\n1\tc\td\n2\te\tf\n"
  )
  examples = read_glue("ax", str(tmp_path), "test")
  path = write_submission(
      "ax", "test", [e.guid for e in examples], [2, 0, 1], str(tmp_path / "out")
  )
  assert os.path.basename(path) == "AX.tsv"
  assert _read(path) == (
      "index\tprediction\n0\tneutral\n1\tcontradiction\n2\tentailment\n"
  )


def test_rewrites_an_existing_file(tmp_path):
  write_submission("sst2", "test", [0, 1], [1, 1], str(tmp_path))
  path = write_submission("sst2", "test", [0], [0], str(tmp_path))
  assert _read(path) == "index\tprediction\n0\t0\n"


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ("mnli", "dev_matched", [0], [0]),
            "GLUE MNLI has no test split 'dev_matched'; its test splits are "
            "test_matched, test_mismatched",
        ),
        (
            ("mnli", "test_matched", ["test_mismatched-3"], [0]),
            "guid 'test_mismatched-3' is neither 'test_matched-<index>' nor an "
            "index; pass the guids read_glue gave the test_matched examples",
        ),
        (
            ("qnli", "test", [0, 1], [0]),
            "2 guids but 1 predictions for GLUE QNLI test; pass one "
            "prediction per test example",
        ),
        (
            ("rte", "test", [0], [2]),
            "prediction 2 is not a class index of GLUE RTE (0..1 for "
            "('entailment', 'not_entailment'))",
        ),
        (
            ("stsb", "test", [0], [float("nan")]),
            "STS-B prediction nan is not a finite number; check the model's "
            "outputs",
        ),
    ],
)
def test_errors_leave_no_file(tmp_path, args, message):
  with pytest.raises(InputError) as e:
    write_submission(*args, str(tmp_path))
  assert str(e.value) == message
  assert not os.listdir(tmp_path)
