"""tools/run_ablation.py: a few steps of every variant of the sentence-task
experiment, every output, the rerun that skips, and the plans of the others."""

import json
import time

import pytest

from albert.experiments.split_corpus import split_corpus
from albert.experiments.variants import CURVE_METRICS
from albert.experiments.variants import EXPERIMENTS
from albert.modeling.config import AlbertConfig
from official.errors import InputError
from tests import helpers

TINY = [
    "AlbertConfig.embedding_size=8",
    "AlbertConfig.hidden_size=16",
    "AlbertConfig.num_layers=1",
    "AlbertConfig.num_heads=2",
    "AlbertConfig.intermediate_size=32",
    "PretrainTask.global_batch_size=8",
]


def test_split_corpus_holds_out_every_nth_document(tmp_path):
  corpus = tmp_path / "c.txt"
  corpus.write_text(
      "\n\n".join(f"doc {d} line one.\ndoc {d} line two." for d in range(10))
      + "\n"
  )
  train, heldout = tmp_path / "train.txt", tmp_path / "heldout.txt"
  counts = split_corpus(str(corpus), str(train), str(heldout), 4)
  assert counts == {"train": 8, "heldout": 2}
  assert heldout.read_text() == (
      "doc 3 line one.\ndoc 3 line two.\n\ndoc 7 line one.\ndoc 7 line two.\n\n"
  )
  assert "doc 3" not in train.read_text() and "doc 9" in train.read_text()
  with pytest.raises(InputError, match="needs at least 16"):
    split_corpus(str(corpus), str(train), str(heldout), 8)


def test_plans_follow_the_paper_tables():
  assert [v.label for v in EXPERIMENTS["sentence_task"]] == [
      "None",
      "NSP",
      "SOP",
  ]
  assert [v.sentence_task for v in EXPERIMENTS["sentence_task"]] == [
      "none",
      "nsp",
      "sop",
  ]
  for name in ("sharing", "embedding_size"):
    for variant in EXPERIMENTS[name]:
      assert variant.sentence_task == "sop"
      ((binding,),) = [variant.gin_params]
      field, value = binding.removeprefix("AlbertConfig.").split("=")
      AlbertConfig.explicit(**{field: eval(value)})  # A valid config.
  assert [v.name for v in EXPERIMENTS["sharing"]] == [
      "all",
      "attention",
      "ffn",
      "none",
  ]


@pytest.mark.slow
def test_sentence_task_experiment_end_to_end(tmp_path, corpus_path):
  work = tmp_path / "work"
  command = [
      "tools/run_ablation.py",
      "--experiment=sentence_task",
      f"--corpus={corpus_path}",
      f"--work_dir={work}",
      "--train_steps=4",
      "--eval_steps=1",
      "--eval_points=2",
      "--vocab_size=400",
      "--seq_length=32",
      "--dupe_factor=1",
      "--parallel=2",  # two variants side by side, then the third
  ] + [f"--gin_param={p}" for p in TINY]
  result = helpers.run(command, timeout=900)
  assert result.returncode == 0, result.stderr[-3000:]
  out = work / "sentence_task"
  results = json.loads((out / "results.json").read_text())
  assert list(results["variants"]) == ["none", "nsp", "sop"]
  params = set()
  for name, variant in results["variants"].items():
    for eval_set in ("sop", "nsp"):
      metrics = variant["eval"][eval_set]
      for key in ("masked_lm_accuracy", "sentence_order_accuracy"):
        assert 0.0 <= metrics[key] <= 1.0, (name, eval_set, key)
    # Held-out curves at steps 2 and 4 (the sentence curve needs a task).
    curves = variant["curves"]
    assert [s for s, _ in curves["masked_lm_accuracy"]] == [2, 4]
    assert bool(curves["sentence_order_accuracy"]) == (name != "none")
    assert (out / name / "ckpt-4.index").exists()
    assert (out / name / "eval_nsp").is_dir()
    params.add(variant["backbone_params"])
  assert len(params) == 1  # The same model for every sentence task.
  table = (out / "results.md").read_text()
  assert "| trained on | MLM accuracy | NSP accuracy | SOP accuracy |" in table
  assert all(f"| {label} |" in table for label in ("None", "NSP", "SOP"))
  for metric in CURVE_METRICS:
    assert (out / f"{metric}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
  # A rerun finds every step done: no training, the same results.
  before = (out / "sop" / "train_metrics.json").stat().st_mtime_ns
  start = time.time()
  again = helpers.run(command, timeout=900)
  assert again.returncode == 0, again.stderr[-3000:]
  assert (out / "sop" / "train_metrics.json").stat().st_mtime_ns == before
  assert json.loads((out / "results.json").read_text()) == results
  assert time.time() - start < 60
