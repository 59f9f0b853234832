"""tools/benchmark_train.py runs as docs/pretraining.md shows."""

import json
import math

import pytest
from tests import helpers

TINY = [
    "--gin_file=gin/tiny.gin",
    "--batch_size=4",
    "--seq_length=32",
    "--steps=2",
    "--warmup_steps=1",
    "--rounds=2",
    "--json",
]


def _run(*args):
  run = helpers.run(["tools/benchmark_train.py", *args], timeout=1200)
  assert run.returncode == 0, run.stderr[-2000:]
  return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_bfloat16_with_trainer_bindings():
  # A TrainerConfig binding on the command line resolves in the process
  # that parses the gin files and in the workers.
  report = _run(
      *TINY,
      "--precision=mixed_bfloat16",
      "--notorch",
      "--gin_param=TrainerConfig.clip_norm=0.5",
  )
  assert set(report["variants"]) == {
      "mixed_bfloat16/tf",
      "mixed_bfloat16/tf_xla",
  }
  for key in (
      "examples_per_s",
      "peak_rss_mb",
      "achieved_gflops",
      "matmul_gflops",
      "block_matmul_gflops",
  ):
    assert report[key] > 0, key
  r = report["precisions"]["mixed_bfloat16"]
  assert report["best_variant"] == f"mixed_bfloat16/{r['best']}"
  # The fractions follow from the rates; whether the step beats TF's own
  # kernels depends on the CPU (CI's once ran XLA's float32 products at
  # twice its emulated bfloat16 matmul), so the report explains it
  # rather than the test bounding it.
  for rate in ("matmul", "block_matmul"):
    assert math.isclose(
        r[f"fraction_of_{rate}_rate"],
        r["achieved_gflops"] / r[f"{rate}_gflops"],
    )
  above = max(r["fraction_of_matmul_rate"], r["fraction_of_block_matmul_rate"])
  assert ("rate_note" in r) == (above > 1)
  assert report["cpu"]["model"] and "bfloat16" in report["cpu_description"]
  # Both variants train the same model on the same batch: the same first loss.
  tf, xla = (
      report["variants"][f"mixed_bfloat16/{n}"]["first_loss"]
      for n in ("tf", "tf_xla")
  )
  assert abs(tf - xla) < 1e-2 * abs(tf)


@pytest.mark.slow
def test_float32_recompute_against_plain_kernels_and_the_fastest_peer():
  # One float32 run without XLA (XLA's variant:
  # test_bfloat16_with_trainer_bindings): --recompute reaches the workers'
  # trainer (a wrong binding would fail there) and the report;
  # --against_gin_param measures ours again with the binding, alone and in
  # turns; the peers (where installed) are measured beside both.
  peers = helpers.installed("torch", "transformers")
  against = "TrainerConfig.fused_kernels=False"
  report = _run(
      *TINY,
      "--precision=float32",
      "--noxla",
      "--recompute",
      f"--against_gin_param={against}",
      *([] if peers else ["--notorch"]),
  )
  assert report["recompute"] is True
  r = report["precisions"]["float32"]
  ours = r["variants"]["tf"]
  assert ours["first_loss"] > 0
  a = r["against"]
  assert a["gin_params"] == [against]
  assert a["speed_vs_against"] > 0 and a["rss_vs_against"] > 0
  # The same model on the same batch, the plain formulas: the same loss
  # within float32 round-off.
  assert a["first_loss"] == pytest.approx(ours["first_loss"], rel=1e-5)
  if not peers:
    assert set(report["variants"]) == {"float32/tf"}
    return
  assert set(r["variants"]) == {"tf", "torch_eager", "torch_compile"}
  speeds = {
      n: r["variants"][n]["examples_per_s"]
      for n in ("torch_eager", "torch_compile")
  }
  assert r["fastest_peer"] == max(speeds, key=speeds.get)
  assert r["speed_vs_peer"] > 0 and r["rss_vs_peer"] > 0
  assert r["variants"]["torch_compile"]["threads"] >= 1


@pytest.mark.slow
def test_classification_fine_tuning_against_the_peer():
  if not helpers.installed("torch", "transformers"):
    pytest.skip("torch and transformers are not installed")
  # torch.compile's own compile takes a minute here: the float32 test
  # covers that peer.
  report = _run(*TINY, "--task=classification", "--noxla", "--notorch_compile")
  assert report["task"] == "classification"
  r = report["precisions"]["float32"]
  assert set(r["variants"]) == {"tf", "torch_eager"}
  # Both sides start a fresh 3-class head: cross-entropy near ln 3.
  for name, v in r["variants"].items():
    assert abs(v["first_loss"] - math.log(3)) < 0.3, (name, v["first_loss"])
  # gin/tiny.gin at seq 32, no masked-LM head, a 3-way head (by hand); the
  # last block computes its keys and values at all 32 tokens, the rest at
  # [CLS] alone.
  block = 4 * 32 * 64 * 64 + 2 * 32 * 32 * 64 + 2 * 32 * 64 * 256
  last = 2 * 32 * 64 * 64 + 2 * 64 * 64 + 2 * 32 * 64 + 2 * 64 * 256
  macs = 32 * 32 * 64 + 3 * block + last + 64 * 64 + 3 * 64
  assert report["gflop_per_example"] == pytest.approx(3 * 2 * macs / 1e9)
  assert r["speed_vs_peer"] > 0 and r["rss_vs_peer"] > 0


@pytest.mark.slow
def test_bad_gin_is_one_line():
  run = helpers.run(
      ["tools/benchmark_train.py", "--gin_file=gin/nope.gin"], timeout=300
  )
  assert run.returncode != 0
  last = run.stderr.strip().splitlines()[-1]
  assert last.startswith(
      f"benchmark_train: error: gin file 'gin/nope.gin' not found (looked in "
      f"{helpers.REPO}, "
  ), last
  assert last.endswith("albert/gin); give a path to an existing file"), last


def test_block_products_are_the_blocks_dense_layers_both_ways():
  # The block mix the benchmark times: forward, input and kernel gradients
  # of Q, K, V, output (768 -> 768) and the FFN (768 -> 3072 -> 768) of
  # ALBERT-base, at 32 x 128 rows: 3 x the forward's dense products.
  from albert.benchmarks import training
  from albert.benchmarks import training_workers

  s = training.TrainBenchmark(batch_size=32, seq_length=128)
  products = training_workers.block_products(s, s.model_config())
  assert len(products) == 18
  m = 32 * 128
  forward = m * (4 * 768 * 768 + 2 * 768 * 3072)
  assert sum(a * b * c for a, b, c, _, _ in products) == 3 * forward
  # Each dense layer k -> n once each way: x W, dy W^T, x^T dy.
  assert products[12:15] == [
      (m, 768, 3072, False, False),
      (m, 3072, 768, False, True),
      (768, m, 3072, True, False),
  ]
