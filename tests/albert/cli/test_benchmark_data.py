"""tools/benchmark_data.py --input=documents runs as docs/pretraining_data.md
shows, with real numbers."""

import json

import pytest
from tests import helpers


@pytest.mark.slow
def test_documents_json_report(tmp_path, corpus_path, spm_model):
  run = helpers.run(
      [
          "tools/benchmark_data.py",
          "--input=documents",
          f"--input_file={corpus_path}",
          f"--spm_model_file={spm_model}",
          "--max_seq_length=128",
          "--disk_dupe_factors=3",
          "--batches=5",
          "--resume_skip=3000",
          f"--output_dir={tmp_path}",
          "--json",
      ],
      timeout=600,
  )
  assert run.returncode == 0, run.stderr[-2000:]
  report = json.loads(run.stdout.strip().splitlines()[-1])
  assert report["seq_length"] == 128 and report["cpu"]
  assert report["examples_per_s_per_core"] > 0
  assert report["offline_examples_per_s_per_core"] > 0
  for name in ("documents_read", "python_documents_read", "examples_read"):
    assert report[name]["examples"] == 5 * 32
    assert report[name]["cores_busy"] > 0
  for name in ("documents_resume", "examples_resume"):
    resume = report[name]
    assert min(resume["resumed"], resume["fresh"], resume["skipped"]) > 0
    # 3000 examples is past the first epoch of the sample corpus.
    assert resume["position"][0] >= 1, resume
  assert report["resume_skip"] == 3000
  assert report["speedup_vs_python_reader"] == (
      report["examples_per_s"] / report["python_examples_per_s"]
  )
  # The documents hold each document once: less than a dupe_factor-th of
  # the examples' bytes, whatever the machine.
  assert set(report["disk_ratio"]) == {"1", "3"}
  assert report["disk_ratio"]["3"] < 1 / 3
  assert report["disk_ratio"]["3"] < report["disk_ratio"]["1"] / 2.5
  assert report["documents_write"]["records"] > 100
