"""End to end: corpus -> SentencePiece -> TFRecords -> pretraining (slow)."""

import re

import pytest
from tests import helpers


@pytest.mark.slow
def test_demo_pipeline_trains_and_the_mlm_loss_falls(tmp_path):
  work = tmp_path / "demo"
  args = [
      "tools/demo.py",
      f"--work_dir={work}",
      "--corpus_mb=0.4",
      "--vocab_size=2000",
      "--train_steps=200",
  ]
  run = helpers.run(args, timeout=1200)
  assert run.returncode == 0, run.stderr[-3000:]
  log = run.stdout + run.stderr
  losses = [
      float(x)
      for x in re.findall(r"train \d+/200 steps.*?masked_lm_loss ([\d.]+)", log)
  ]
  # Reported every 100 steps (gin/demo.gin): 6.65 and 5.73 in the run of
  # 2026-11-29.
  assert len(losses) == 2, log[-3000:]
  assert losses[-1] < losses[0] - 0.5
  final = re.search(
      r"final masked_lm_accuracy=([\d.]+) .*"
      r"sentence_order_accuracy=([\d.]+)",
      run.stdout,
  )
  assert final and 0.0 < float(final.group(1)) < 1.0
  assert (work / "model" / "ckpt-200.index").exists()
  assert (work / "model" / "operative_config.gin").exists()
  assert (work / "data" / "eval.manifest.json").exists()
  # The held-out figures are the training run's final evaluation, and the
  # loss curve is a PNG.
  held_out = re.search(
      r"masked-LM accuracy ([\d.]+)%, sentence-order accuracy ([\d.]+)%",
      run.stdout,
  )
  assert held_out, run.stdout[-3000:]
  assert float(held_out.group(1)) == pytest.approx(
      100 * float(final.group(1)), abs=0.06
  )
  assert (work / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
  # Every stage but the query is skipped on a rerun: the model has its
  # steps and the export is of its last checkpoint.
  rerun = helpers.run(args, timeout=1200)
  assert rerun.returncode == 0, rerun.stderr[-3000:]
  for stage in ("1/6", "3/6", "4/6", "5/6"):
    assert stage not in rerun.stdout, rerun.stdout
  assert "pretrained already" in rerun.stdout
  assert "exported already" in rerun.stdout
  assert "6/6" in rerun.stdout
  assert "fill_mask: Return a new [MASK]" in run.stdout
  assert re.search(r"\[MASK\] at token \d+: \S+ \(0\.\d{3}\)", run.stdout)
  # Finished stages are only reused with the settings that made them.
  other = helpers.run(args + ["--seq_length=32"], timeout=600)
  assert other.returncode != 0
  assert "--seq_length=64 then, 32 now" in other.stderr
  assert (work / "model" / "ckpt-200.index").exists()
