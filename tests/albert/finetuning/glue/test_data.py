"""GLUE TSV reading: each task's files as download_glue_data.py writes them."""

import os
import re

import pytest

from official.errors import InputError
from albert.finetuning.glue.data import GLUE_TASKS, get_glue_task, read_glue
from albert.finetuning.text_example import TextExample

MNLI_HEADER = (
    "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\t"
    "sentence2_binary_parse\tsentence1_parse\tsentence2_parse\t"
    "sentence1\tsentence2"
)
# A QQP question that opens a quote it never closes: with csv's default
# quoting it would swallow the rest of the file.
STRAY_QUOTE = '"How do I learn Python in 1 month?'


def _mnli_row(index, sentence1, sentence2, labels=()):
  """A row of an MNLI file: 8 metadata columns, the sentences, labels."""
  return "\t".join(
      [
          str(index),
          "31193",
          "31193n",
          "fiction",
          "( ( a ) b )",
          "( c d )",
          "(ROOT (S a b))",
          "(ROOT (S c d))",
          sentence1,
          sentence2,
          *labels,
      ]
  )


_FILES = {
    "CoLA/train.tsv": (
        "gj04\t1\t\tOur friends won't buy this analysis.\n"
        "gj04\t0\t*\tOne more pseudo generalization and I'm giving up.\n"
    ),
    "CoLA/test.tsv": (
        "index\tsentence\n"
        "0\tBill whistled past the house.\n"
        "1\tThe car honked its way down the road.\n"
    ),
    "SST-2/dev.tsv": (
        "sentence\tlabel\n"
        "it 's a charming and often affecting journey . \t1\n"
    ),
    "SST-2/test.tsv": "index\tsentence\n0\tuneasy mishmash of styles .\n",
    "MRPC/train.tsv": (
        "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
        '1\t702876\t702977\tHe called " the witness " a liar .\t'
        'He called him " the witness " .\n'
    ),
    "MRPC/test.tsv": (
        "index\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
        "0\t1089874\t1089925\tPCCW 's chief quit .\tThe chief left PCCW .\n"
    ),
    "STS-B/train.tsv": (
        "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\t"
        "sentence1\tsentence2\tscore\n"
        "0\tmain-captions\tMSRvid\t2012test\t0001\tnone\tnone\t"
        "A plane is taking off.\tAn air plane is taking off.\t5.000\n"
        "1\tmain-captions\tMSRvid\t2012test\t0004\tnone\tnone\t"
        "A man is playing a large flute.\tA man is playing a flute.\t3.800\n"
    ),
    "STS-B/test.tsv": (
        "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\t"
        "sentence1\tsentence2\n"
        "0\tmain-captions\tMSRvid\t2012test\t0024\tnone\tnone\t"
        "A girl is styling her hair.\tA girl is brushing her hair.\n"
    ),
    "QQP/train.tsv": (
        "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
        f"133273\t213221\t213222\t{STRAY_QUOTE}\tHow to learn Python?\t1\n"
        '402555\t536040\t536041\tWhat is a 6" sub?\tIs it "big"?\t0\n'
    ),
    "QQP/test.tsv": (
        "id\tquestion1\tquestion2\n"
        "0\tHow does the Surface Pro 4 compare?\tWhy core m3?\n"
    ),
    "MNLI/train.tsv": (
        MNLI_HEADER
        + "\tlabel1\tgold_label\n"
        + _mnli_row(
            0,
            "Cream skimming has two dimensions.",
            "Product and geography make it work.",
            ["neutral", "neutral"],
        )
        + "\n"
    ),
    "MNLI/dev_matched.tsv": (
        MNLI_HEADER
        + "\tlabel1\tlabel2\tlabel3\tlabel4\tlabel5\tgold_label\n"
        + _mnli_row(
            0,
            "The new rights are nice enough.",
            "Everyone really likes the newest benefits.",
            [
                "neutral",
                "entailment",
                "neutral",
                "neutral",
                "neutral",
                "neutral",
            ],
        )
        + "\n"
    ),
    "MNLI/dev_mismatched.tsv": (
        MNLI_HEADER
        + "\tlabel1\tlabel2\tlabel3\tlabel4\tlabel5\tgold_label\n"
        + _mnli_row(
            0,
            "Your contribution helped.",
            "It did not help.",
            ["contradiction"] * 6,
        )
        + "\n"
    ),
    "MNLI/test_matched.tsv": (
        MNLI_HEADER
        + "\n"
        + _mnli_row(5, "Hierbas is a liqueur.", "Hierbas is a cake.")
        + "\n"
    ),
    "MNLI/test_mismatched.tsv": (
        MNLI_HEADER + "\n" + _mnli_row(9, "What a day.", "A day.") + "\n"
    ),
    "QNLI/dev.tsv": (
        "index\tquestion\tsentence\tlabel\n"
        "0\tWhat came into force after the new constitution?\t"
        "As of that day, the new constitution came into force.\t"
        "not_entailment\n"
    ),
    "RTE/test.tsv": (
        "index\tsentence1\tsentence2\n"
        "3\tMexico's new president visited Texas.\tA president went.\n"
    ),
    "WNLI/train.tsv": (
        "index\tsentence1\tsentence2\tlabel\n"
        "0\tI stuck a pin through a carrot.\tThe carrot had a hole.\t1\n"
    ),
    "diagnostic/diagnostic.tsv": (
        "index\tsentence1\tsentence2\n"
        "0\tThe cat sat on the mat.\tThe cat did not sit on the mat.\n"
        "1\tThe cat did not sit on the mat.\tThe cat sat on the mat.\n"
    ),
}


@pytest.fixture
def glue_dir(tmp_path):
  for name, text in _FILES.items():
    path = tmp_path / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
  return str(tmp_path)


def _write(glue_dir, name, text):
  path = os.path.join(glue_dir, name)
  with open(path, "w", encoding="utf-8") as f:
    f.write(text)
  return path


@pytest.mark.parametrize(
    "task, split, expected",
    [
        (
            "cola",
            "train",
            [
                TextExample(
                    "train-0", "Our friends won't buy this analysis.", None, "1"
                ),
                TextExample(
                    "train-1",
                    "One more pseudo generalization and I'm giving up.",
                    None,
                    "0",
                ),
            ],
        ),
        (
            "cola",
            "test",
            [
                TextExample(
                    "test-0", "Bill whistled past the house.", None, None
                ),
                TextExample(
                    "test-1",
                    "The car honked its way down the road.",
                    None,
                    None,
                ),
            ],
        ),
        (
            "sst2",
            "dev",
            [
                TextExample(
                    "dev-0",
                    "it 's a charming and often affecting journey . ",
                    None,
                    "1",
                )
            ],
        ),
        (
            "SST-2",
            "test",
            [TextExample("test-0", "uneasy mishmash of styles .", None, None)],
        ),
        (
            "mrpc",
            "train",
            [
                TextExample(
                    "train-0",
                    'He called " the witness " a liar .',
                    'He called him " the witness " .',
                    "1",
                )
            ],
        ),
        (
            "mrpc",
            "test",
            [
                TextExample(
                    "test-0",
                    "PCCW 's chief quit .",
                    "The chief left PCCW .",
                    None,
                )
            ],
        ),
        (
            "stsb",
            "train",
            [
                TextExample(
                    "train-0",
                    "A plane is taking off.",
                    "An air plane is taking off.",
                    5.0,
                ),
                TextExample(
                    "train-1",
                    "A man is playing a large flute.",
                    "A man is playing a flute.",
                    3.8,
                ),
            ],
        ),
        (
            "STS-B",
            "test",
            [
                TextExample(
                    "test-0",
                    "A girl is styling her hair.",
                    "A girl is brushing her hair.",
                    None,
                )
            ],
        ),
        (
            "qqp",
            "train",
            [
                TextExample(
                    "train-0", STRAY_QUOTE, "How to learn Python?", "1"
                ),
                TextExample(
                    "train-1", 'What is a 6" sub?', 'Is it "big"?', "0"
                ),
            ],
        ),
        (
            "qqp",
            "test",
            [
                TextExample(
                    "test-0",
                    "How does the Surface Pro 4 compare?",
                    "Why core m3?",
                    None,
                )
            ],
        ),
        (
            "mnli",
            "train",
            [
                TextExample(
                    "train-0",
                    "Cream skimming has two dimensions.",
                    "Product and geography make it work.",
                    "neutral",
                )
            ],
        ),
        (
            "mnli",
            "dev_matched",
            [
                TextExample(
                    "dev_matched-0",
                    "The new rights are nice enough.",
                    "Everyone really likes the newest benefits.",
                    "neutral",
                )
            ],
        ),
        (
            "mnli",
            "dev_mismatched",
            [
                TextExample(
                    "dev_mismatched-0",
                    "Your contribution helped.",
                    "It did not help.",
                    "contradiction",
                )
            ],
        ),
        (
            "mnli",
            "test_matched",
            [
                TextExample(
                    "test_matched-5",
                    "Hierbas is a liqueur.",
                    "Hierbas is a cake.",
                    None,
                )
            ],
        ),
        (
            "mnli",
            "test_mismatched",
            [TextExample("test_mismatched-9", "What a day.", "A day.", None)],
        ),
        (
            "qnli",
            "dev",
            [
                TextExample(
                    "dev-0",
                    "What came into force after the new constitution?",
                    "As of that day, the new constitution came into force.",
                    "not_entailment",
                )
            ],
        ),
        (
            "rte",
            "test",
            [
                TextExample(
                    "test-3",
                    "Mexico's new president visited Texas.",
                    "A president went.",
                    None,
                )
            ],
        ),
        (
            "wnli",
            "train",
            [
                TextExample(
                    "train-0",
                    "I stuck a pin through a carrot.",
                    "The carrot had a hole.",
                    "1",
                )
            ],
        ),
        (
            "ax",
            "test",
            [
                TextExample(
                    "test-0",
                    "The cat sat on the mat.",
                    "The cat did not sit on the mat.",
                    None,
                ),
                TextExample(
                    "test-1",
                    "The cat did not sit on the mat.",
                    "The cat sat on the mat.",
                    None,
                ),
            ],
        ),
    ],
)
def test_reads_each_task_layout(glue_dir, task, split, expected):
  assert read_glue(task, glue_dir, split) == expected


def test_skips_blank_lines(glue_dir):
  _write(
      glue_dir,
      "WNLI/dev.tsv",
      "index\tsentence1\tsentence2\tlabel\n\n0\ta\tb\t0\n\n",
  )
  assert read_glue("wnli", glue_dir, "dev") == [
      TextExample("dev-0", "a", "b", "0")
  ]


def test_spec_table():
  assert list(GLUE_TASKS) == [
      "cola",
      "sst2",
      "mrpc",
      "stsb",
      "qqp",
      "mnli",
      "qnli",
      "rte",
      "wnli",
      "ax",
  ]
  submissions = {
      name: spec.submission_files for name, spec in GLUE_TASKS.items()
  }
  assert submissions == {
      "cola": {"test": "CoLA.tsv"},
      "sst2": {"test": "SST-2.tsv"},
      "mrpc": {"test": "MRPC.tsv"},
      "stsb": {"test": "STS-B.tsv"},
      "qqp": {"test": "QQP.tsv"},
      "mnli": {"test_matched": "MNLI-m.tsv", "test_mismatched": "MNLI-mm.tsv"},
      "qnli": {"test": "QNLI.tsv"},
      "rte": {"test": "RTE.tsv"},
      "wnli": {"test": "WNLI.tsv"},
      "ax": {"test": "AX.tsv"},
  }
  mnli = GLUE_TASKS["mnli"]
  assert mnli.eval_splits == ("dev_matched", "dev_mismatched")
  assert mnli.labels == ("contradiction", "entailment", "neutral")
  ax = GLUE_TASKS["ax"]
  assert (ax.splits, ax.eval_splits, ax.labels, ax.model_task) == (
      {"test": "diagnostic.tsv"},
      (),
      mnli.labels,
      "mnli",
  )
  assert GLUE_TASKS["stsb"].is_regression
  assert GLUE_TASKS["rte"].labels == ("entailment", "not_entailment")
  assert GLUE_TASKS["cola"].metric_names == ("accuracy", "mcc")
  assert get_glue_task("MNLI") is mnli


def test_wrong_column_count_names_file_and_line(glue_dir):
  path = _write(
      glue_dir,
      "MRPC/dev.tsv",
      "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
      "1\t1\t2\ta\tb\n0\t3\ta\n",
  )
  with pytest.raises(InputError) as e:
    read_glue("mrpc", glue_dir, "dev")
  assert str(e.value) == (
      f"{path}:3: expected 5 tab-separated columns, "
      "found 3; is this the GLUE MRPC dev.tsv?"
  )


def test_cola_train_without_header_has_four_columns(glue_dir):
  # A header-bearing test file given as train: two columns, not four.
  path = _write(glue_dir, "CoLA/dev.tsv", _FILES["CoLA/test.tsv"])
  with pytest.raises(
      InputError,
      match=(
          f"^{re.escape(path)}:1: expected 4 tab-separated columns, found 2; "
          "is this the GLUE CoLA dev.tsv\\?$"
      ),
  ):
    read_glue("cola", glue_dir, "dev")


def test_mnli_row_shorter_than_its_header(glue_dir):
  header = MNLI_HEADER + "\tlabel1\tgold_label\n"
  path = _write(
      glue_dir,
      "MNLI/train.tsv",
      header + _mnli_row(0, "a", "b", ["neutral"]) + "\n",
  )
  with pytest.raises(
      InputError,
      match=(
          f"^{re.escape(path)}:2: expected 12 tab-separated columns, found 11;"
      ),
  ):
    read_glue("mnli", glue_dir, "train")


def test_short_header(glue_dir):
  path = _write(glue_dir, "QNLI/train.tsv", "index\tquestion\n0\ta\n")
  with pytest.raises(
      InputError,
      match=(
          f"^{re.escape(path)}:1: the header has 2 tab-separated columns, "
          "expected at least 4; is this the GLUE QNLI train.tsv\\?$"
      ),
  ):
    read_glue("qnli", glue_dir, "train")


def test_unknown_label(glue_dir):
  path = _write(
      glue_dir,
      "RTE/dev.tsv",
      "index\tsentence1\tsentence2\tlabel\n0\ta\tb\tneutral\n",
  )
  with pytest.raises(InputError) as e:
    read_glue("rte", glue_dir, "dev")
  assert str(e.value) == (
      f"{path}:2: label 'neutral' is not one of ('entailment', "
      "'not_entailment'); is this the GLUE RTE dev.tsv?"
  )


@pytest.mark.parametrize("score", ["high", "nan", ""])
def test_stsb_score_must_be_a_number(glue_dir, score):
  header = _FILES["STS-B/train.tsv"].splitlines()[0]
  path = _write(
      glue_dir,
      "STS-B/dev.tsv",
      f"{header}\n0\tg\tf\ty\t1\tn\tn\ta\tb\t{score}\n",
  )
  with pytest.raises(
      InputError,
      match=(
          f"^{re.escape(path)}:2: score '{score}' is not a number; "
          "is this the GLUE STS-B dev.tsv\\?$"
      ),
  ):
    read_glue("stsb", glue_dir, "dev")


def test_missing_file_says_where_the_layout_keeps_it(glue_dir):
  path = os.path.join(glue_dir, "MNLI", "dev_mismatched.tsv")
  os.remove(path)
  with pytest.raises(InputError) as e:
    read_glue("mnli", glue_dir, "dev_mismatched")
  assert str(e.value) == (
      f"{path}: no such file; the GLUE layout (download_glue_data.py) keeps "
      "it at DATA_DIR/MNLI/dev_mismatched.tsv"
  )


def test_empty_file(glue_dir):
  path = _write(glue_dir, "SST-2/train.tsv", "sentence\tlabel\n")
  with pytest.raises(InputError, match=f"^{re.escape(path)}: no examples;"):
    read_glue("sst2", glue_dir, "train")


def test_unknown_task_and_split(glue_dir):
  with pytest.raises(InputError) as e:
    read_glue("squad", glue_dir, "dev")
  assert str(e.value) == (
      "unknown GLUE task 'squad'; known tasks: cola, "
      "sst2, mrpc, stsb, qqp, mnli, qnli, rte, wnli, ax"
  )
  with pytest.raises(InputError) as e:
    read_glue("mnli", glue_dir, "dev")
  assert str(e.value) == (
      "GLUE MNLI has no split 'dev'; its splits are train, dev_matched, "
      "dev_mismatched, test_matched, test_mismatched"
  )
  with pytest.raises(InputError, match="GLUE AX has no split 'dev'"):
    read_glue("ax", glue_dir, "dev")
