"""The README's own-data example: the sample CSV set, the demo model's gin
file, and the fine-tuning command line's --seeds errors."""

import pytest

import csv
import os

import gin

from albert.pretraining import training as pretraining  # noqa: F401  (gin: what demo.gin binds)
from albert.modeling.config import AlbertConfig
from albert.finetuning.own_data import reader as own_data
from albert.finetuning.own_data import sample_data
from official.config import gin_files
from tests import helpers as test_helpers


def _rows(path):
  with open(path, newline="", encoding="utf-8") as f:
    return list(csv.DictReader(f))


def test_sample_classification_data_is_real_split_and_stable(tmp_path):
  run = test_helpers.run(
      [
          test_helpers.tool("make_sample_classification_data"),
          f"--out_dir={tmp_path}",
      ]
  )
  assert run.returncode == 0, run.stderr[-2000:]
  splits = {s: _rows(tmp_path / f"{s}.csv") for s in sample_data.SPLITS}
  assert all(
      list(rows[0]) == ["id", "text", "label"] for rows in splits.values()
  )
  sizes = {s: len(rows) for s, rows in splits.items()}
  total = sum(sizes.values())
  assert total > 1000
  assert (
      0.05 < sizes["dev"] / total < 0.15 and 0.05 < sizes["test"] / total < 0.15
  )
  for rows in splits.values():
    assert {r["label"] for r in rows} == set(sample_data.PACKAGES)
  texts = {s: {r["text"] for r in rows} for s, rows in splits.items()}
  assert (
      not texts["train"] & texts["dev"] and not texts["train"] & texts["test"]
  )
  # What the task reads, and the same files on a second run.
  examples, pair = own_data.read_text_examples(
      str(tmp_path / "dev.csv"),
      own_data.Columns(),
      pair=None,
      labeled=True,
      regression=False,
  )
  assert not pair and len(examples) == sizes["dev"]
  first = (tmp_path / "train.csv").read_bytes()
  sample_data.write_sample_classification_data(str(tmp_path))
  assert (tmp_path / "train.csv").read_bytes() == first
  assert sorted(os.listdir(tmp_path)) == ["dev.csv", "test.csv", "train.csv"]

  # --multi_label: the same sentences, one or two per text, labelled with
  # the set of their packages.
  multi = tmp_path / "multi"
  sample_data.write_sample_classification_data(str(multi), multi_label=True)
  for split, single in splits.items():
    rows = _rows(multi / f"{split}.csv")
    assert list(rows[0]) == ["id", "text", "labels"]
    package = {r["text"]: r["label"] for r in single}
    two = 0
    for row in rows:
      parts = [t for t in package if t in row["text"]]
      assert parts, row
      labels = row["labels"].split("|")
      assert labels == sorted(set(labels)) and set(labels) <= set(
          sample_data.PACKAGES
      )
      two += len(labels) == 2
    assert len(rows) < len(single) and two > len(rows) / 5

  # --minority: logging 5% of each split, the other packages "other".
  skewed = tmp_path / "skewed"
  sample_data.write_sample_classification_data(str(skewed), minority="logging")
  for split, single in splits.items():
    rows = _rows(skewed / f"{split}.csv")
    labels = [r["label"] for r in rows]
    assert set(labels) == {"logging", "other"}
    assert labels.count("logging") / len(rows) == pytest.approx(0.05, abs=0.01)
    package = {r["text"]: r["label"] for r in single}
    assert all(
        package[r["text"]] == "logging"
        if r["label"] == "logging"
        else package[r["text"]] != "logging"
        for r in rows
    )

  # --long_documents: 21 sentences of packages that are never a label, then
  # three of the label's package from the split.
  long = tmp_path / "long"
  sample_data.write_sample_classification_data(str(long), long_documents=True)
  preamble = {
      s
      for s, _ in sample_data.labelled_sentences(sample_data.PREAMBLE_PACKAGES)
  }
  for split, single in splits.items():
    rows = _rows(long / f"{split}.csv")
    assert len(rows) == sample_data.LONG_DOCUMENTS[split]
    theirs = {}
    for r in single:
      theirs.setdefault(r["label"], set()).add(r["text"])
    for row in rows[:40]:
      text = row["text"]
      end = [t for t in theirs[row["label"]] if text.endswith(t)]
      assert end, row
      start = text[: -len(max(end, key=len))]
      assert len([s for s in preamble if s in start]) >= 5, row
    assert {r["label"] for r in rows} == set(sample_data.PACKAGES)
  with pytest.raises(ValueError, match="choose one at most"):
    sample_data.write_sample_classification_data(
        str(long), multi_label=True, long_documents=True
    )


def _config(files, params=()):
  gin.clear_config()
  gin_files.parse_gin(files, params, search_paths=[test_helpers.REPO])
  return AlbertConfig()


def test_demo_model_gin_is_the_architecture_make_demo_pretrains():
  demo = _config(
      ["gin/tiny.gin", "gin/demo.gin"], ["AlbertConfig.vocab_size = 3000"]
  )
  assert _config(["gin/demo_model.gin"]) == demo
  assert demo.hidden_size == 128 and demo.num_layers == 2


@pytest.mark.slow
def test_seeds_flag_error_is_one_line(tmp_path):
  common = [
      "-m",
      "albert.run_finetuning",
      "--gin_file=gin/finetune/text_classification.gin",
      "--gin_file=gin/tiny.gin",
      f"--model_dir={tmp_path / 'm'}",
  ]
  run = test_helpers.run(common + ["--seeds=1,two"])
  test_helpers.assert_one_line(
      run, "run_finetuning", "--seeds=1,two: list integers"
  )
  assert not (tmp_path / "m").exists()
