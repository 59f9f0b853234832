"""tools/benchmark_train.py runs as the README shows and reports real numbers."""

import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.slow
def test_json_report_on_a_tiny_model():
  run = subprocess.run(
      [sys.executable, "tools/benchmark_train.py", "--gin_file=gin/tiny.gin",
       "--batch_size=4", "--seq_length=32", "--steps=2", "--warmup_steps=1",
       "--notorch", "--json"],
      cwd=REPO, capture_output=True, text=True, timeout=900,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  assert run.returncode == 0, run.stderr[-2000:]
  report = json.loads(run.stdout.strip().splitlines()[-1])
  for key in ("examples_per_s", "peak_rss_mb", "achieved_gflops",
              "matmul_gflops"):
    assert report[key] > 0, key
  assert set(report["variants"]) == {"tf", "tf_xla"}
  assert report["achieved_gflops"] < report["matmul_gflops"]
  # The two variants train the same model on the same batch.
  losses = [v["loss"] for v in report["variants"].values()]
  assert abs(losses[0] - losses[1]) < 1e-3 * abs(losses[0])


def test_bad_gin_is_one_line():
  run = subprocess.run(
      [sys.executable, "tools/benchmark_train.py", "--gin_file=gin/nope.gin"],
      cwd=REPO, capture_output=True, text=True, timeout=300,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  assert run.returncode != 0
  assert run.stderr.strip().splitlines()[-1] == (
      "benchmark_train: gin file 'gin/nope.gin' not found (looked in the "
      "current directory and the repository root)")
