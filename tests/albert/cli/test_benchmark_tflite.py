"""tools/benchmark_tflite.py runs as docs/serving.md shows, real numbers."""

import json

import pytest
from tests import helpers


def _benchmark(*flags):
  return helpers.run(
      ["tools/benchmark_tflite.py", "--gin_file=gin/tiny.gin", *flags],
      timeout=900,
  )


@pytest.mark.slow
def test_json_report_on_a_tiny_model():
  run = _benchmark("--seq_length=16", "--repeats=4", "--json")
  assert run.returncode == 0, run.stderr[-2000:]
  report = json.loads(run.stdout.strip().splitlines()[-1])
  names = ("saved_model", "saved_model_xla", "tflite_float32")
  names += ("tflite_dynamic_int8",)
  assert report["rounds"] == 4 and report["seq_length"] == 16
  assert report["cpu_description"]
  for name in names:
    r = report[name]
    assert r["latency_ms"] > 0 and r["peak_rss_mb"] > 0 and r["size_mb"] > 0
    assert r["vs_saved_model"] > 0
  # The ratio is to the baseline measured in the same rounds.
  assert report["saved_model"]["vs_saved_model"] == 1.0
  assert report["saved_model"]["max_abs_diff"] == 0.0
  # Every contestant computes the same model on the same ids.
  assert report["saved_model_xla"]["max_abs_diff"] < 1e-4
  assert report["tflite_float32"]["max_abs_diff"] < 1e-4
  assert 0 < report["tflite_dynamic_int8"]["max_abs_diff"] < 0.2
  int8, f32 = report["tflite_dynamic_int8"], report["tflite_float32"]
  assert int8["size_mb"] < 0.5 * f32["size_mb"]
  assert report["tflite_float32"]["threads"] >= 1


@pytest.mark.slow
def test_bad_seq_length_is_one_line():
  run = _benchmark("--seq_length=1000")
  assert run.returncode == 1
  last = run.stderr.strip().splitlines()[-1]
  assert last.startswith("benchmark_tflite: error: --seq_length=1000"), last
  assert "tokens" in last, last
