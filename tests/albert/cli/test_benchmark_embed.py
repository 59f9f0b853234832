"""tools/benchmark_embed.py's measuring on the sentence-transformers fixture:
every contestant embeds the same texts as `encode` does, and the report
holds the ratios the command prints."""

import os

import pytest

from albert.benchmarks import embedding
from tests import helpers

MODEL = os.path.join(
    helpers.REPO, "tests", "testdata", "sentence_transformers", "model"
)


def test_sample_texts_are_mixed_and_the_same_for_a_seed():
  texts = embedding.sample_texts(200, seed=3)
  assert texts == embedding.sample_texts(200, seed=3)
  lengths = sorted(len(t.split()) for t in texts)
  assert lengths[0] < 15 and lengths[-1] > 150, lengths[::20]


@pytest.mark.slow
def test_every_contestant_embeds_as_encode(tmp_path):
  if not helpers.installed("sentence_transformers", "onnxruntime"):
    pytest.skip("sentence-transformers or onnxruntime is not installed")
  report = embedding.measure(
      embedding.EmbedBenchmark(
          model=MODEL,
          work_dir=str(tmp_path),
          num_texts=6,
          batch_size=4,
          rounds=1,
          torch_compile=False,
          bf16=False,
      ),
      log=lambda line: None,
  )
  contestants = {
      "ours_saved_model_float32",
      "ours_onnx_batched",
      "onnx_one_text_padded",
      "st_encode_float32",
  }
  assert contestants <= set(report), sorted(report)
  for name in contestants:
    row = report[name]
    assert row["min_cosine_to_st_float32"] >= 0.99999, (name, row)
    assert row["texts_per_second"] > 0 and row["peak_rss_mb"] > 0
  assert report["ours_best"] == "ours_saved_model_float32"
  assert report["st_best"] == "st_encode_float32"
  for ratio in ("ours_vs_st_best", "ours_vs_one_text_padded"):
    assert report[ratio] > 0
