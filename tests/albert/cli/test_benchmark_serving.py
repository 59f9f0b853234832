"""tools/benchmark_serving.py runs as docs/serving.md shows, real numbers."""

import json

import pytest
from tests import helpers


@pytest.mark.slow
def test_json_report_on_a_tiny_model(spm_model):
  have_torch = helpers.installed("torch", "transformers")
  run = helpers.run(
      [
          "tools/benchmark_serving.py",
          "--gin_file=gin/tiny.gin",
          f"--spm_model_file={spm_model}",
          "--seq_length=32",
          "--batch_size=4",
          "--repeats=5",
          "--batch_repeats=2",
          "--mix_rounds=6",
          "--json",
      ],
      timeout=900,
  )
  assert run.returncode == 0, run.stderr[-2000:]
  report = json.loads(run.stdout.strip().splitlines()[-1])
  assert report["rounds"] == 5
  ours, floor = report["saved_model"], report["matmul_floor"]
  assert ours["latency_ms"] > 0 and ours["throughput_per_s"] > 0
  assert ours["tokens"] == 32  # the benchmark text fills seq_length
  # Timed, both of them, in the same turns; which is faster is the
  # benchmark's finding, not this test's (on a tiny model the floor's own
  # per-call overhead can exceed the served model's).
  assert floor["latency_ms"] > 0
  assert (
      report["floor_vs_saved_model"] > 0 and report["saved_model_vs_floor"] > 0
  )
  # onnxruntime is in the development set: our ONNX export is timed too.
  onnx = report["onnxruntime"]
  assert onnx["latency_ms"] > 0 and onnx["throughput_per_s"] > 0
  assert report["latency_vs_onnxruntime"] > 0
  assert report["int8_throughput_vs_onnxruntime"] > 0
  assert report["onnxruntime_int8"]["throughput_per_s"] > 0
  # The request mix: short texts, the same ones for every contestant.
  mix = report["mix"]
  assert mix["tokens"] == [10, 32] and 10 <= mix["mean_tokens"] <= 32
  for name in (
      "fixed_length",
      "dynamic_length",
      "dynamic_length_xla",
      "onnxruntime",
      "onnxruntime_int8",
  ):
    assert mix[name]["latency_ms"] > 0 and mix[name]["throughput_per_s"] > 0
  # Both SavedModels see the same texts and tokens; only the padding differs.
  assert mix["fixed_length"]["tokens"] == mix["dynamic_length"]["tokens"]
  assert mix["dynamic_length_latency_vs_fixed"] > 0
  # The products alone at each request's length: TF's kernels (XLA would
  # compile once per length), in the same turns.
  assert mix["matmul_floor"]["latency_ms"] > 0
  assert mix["matmul_floor"]["xla"] is False
  assert mix["floor_latency_vs_fixed"] > 0
  assert mix["dynamic_length_vs_floor"] > 0
  assert mix["dynamic_length_xla_throughput_vs_fixed"] > 0
  if have_torch:
    torch = report["torch"]
    assert torch["latency_ms"] > 0 and torch["threads"] >= 1
    assert report["latency_vs_torch"] > 0 and report["floor_vs_torch"] > 0


@pytest.mark.slow
def test_missing_spm_is_one_line():
  run = helpers.run(
      [
          "tools/benchmark_serving.py",
          "--gin_file=gin/tiny.gin",
          "--spm_model_file=/nonexistent/spm.model",
      ],
      timeout=300,
  )
  assert run.returncode != 0
  last = run.stderr.strip().splitlines()[-1]
  assert last.startswith("benchmark_serving: error: "), last
  assert "nonexistent" in last, last
