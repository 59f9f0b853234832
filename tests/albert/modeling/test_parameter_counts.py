"""Parameter counts of the released sizes: docs/reference.md section 2."""

import json
import re
import shlex

import gin
import pytest

from albert.modeling.config import AlbertConfig
from albert.modeling.flops import forward_flops_per_example
from albert.modeling.parameter_counts import parameter_counts
from official.config.gin_files import parse_gin
from tests import helpers
from tests.helpers import REPO


# size: (backbone, MLM + SOP heads) from docs/reference.md section 2.
RELEASED = {
    "base": (11_683_584, 130_226),
    "large": (17_683_968, 163_506),
    "xlarge": (58_724_864, 296_626),
    "xxlarge": (222_595_584, 562_866),
}


def _config(size):
  gin.clear_config()
  try:
    parse_gin([f"gin/{size}.gin"], search_paths=[REPO])
    return AlbertConfig()
  finally:
    gin.clear_config()


@pytest.mark.parametrize(
    "size",
    [
        "base",
        "large",
        pytest.param("xlarge", marks=pytest.mark.slow),
        pytest.param("xxlarge", marks=pytest.mark.slow),
    ],
)
def test_released_sizes(size):
  backbone, heads = RELEASED[size]
  counts = parameter_counts(_config(size))
  assert counts["backbone_params"] == backbone
  assert counts["heads_params"] == heads
  assert counts["pretrainer_params"] == backbone + heads
  assert (
      counts["embedding_params"]
      + counts["attention_params"]
      + counts["ffn_params"]
      + counts["pooler_params"]
  ) == backbone


def test_e_equals_h_has_no_projection():
  # As the original (modeling.transformer_model): no embedding_hidden_mapping
  # when the widths agree; nor FLOPs for it.
  config = _config("base").replace(embedding_size=768)
  counts = parameter_counts(config)
  v, e = config.vocab_size, config.embedding_size
  assert counts["embedding_params"] == v * e + 512 * e + 2 * e + 2 * e
  with_projection = forward_flops_per_example(
      config.replace(embedding_size=767), 128, 20
  )
  assert forward_flops_per_example(config, 128, 20) < with_projection


def test_factorization_saves_what_the_paper_says():
  """V*E + E*H instead of V*H: base embeddings are ~4.0M, not ~23M."""
  config = _config("base")
  counts = parameter_counts(config)
  v, e, h = config.vocab_size, config.embedding_size, config.hidden_size
  assert counts["embedding_params"] == (
      v * e + 512 * e + 2 * e + 2 * e + e * h + h
  )
  assert counts["embedding_params"] < v * h / 5


_GROWTH_PROBE = """
import json
from albert.modeling.config import AlbertConfig
from albert.modeling.parameter_counts import parameter_counts
from official.benchmark.turns import peak_rss_mb
from official.config.gin_files import parse_gin
parse_gin(["gin/xxlarge.gin"], search_paths=["."])
config = AlbertConfig()
before = peak_rss_mb()
total = parameter_counts(config)["pretrainer_params"]
print(json.dumps({"total": total, "grew_mb": peak_rss_mb() - before}))
"""


@pytest.mark.slow
def test_counting_xxlarge_draws_no_weights():
  # Its float32 weights take 851 MiB; drawn from their initializers, the
  # peak of a fresh process grew by 1,604 MiB (the draws' temporaries), by
  # 923 MiB as zeros.
  run = helpers.run(["-c", _GROWTH_PROBE])
  assert run.returncode == 0, run.stderr[-2000:]
  probe = json.loads(run.stdout.strip().splitlines()[-1])
  assert probe["total"] == sum(RELEASED["xxlarge"])
  assert probe["grew_mb"] < 1200, probe


@pytest.mark.slow
def test_cli_json_and_table():
  run = helpers.run(
      [
          "-m",
          "albert.cli.model_summary",
          "--gin_file=gin/large.gin",
          "--json",
      ],
  )
  assert run.returncode == 0, run.stderr[-2000:]
  data = json.loads(run.stdout)
  assert data["backbone_params"] == RELEASED["large"][0]
  assert data["pretrainer_params"] == sum(RELEASED["large"])
  assert data["config"]["num_layers"] == 24
  run = helpers.run(
      [
          "-m",
          "albert.cli.model_summary",
          "--gin_file=gin/base.gin",
          "--gin_file=gin/tiny.gin",
          "--gin_param=AlbertConfig.sharing='none'",
      ],
  )
  assert run.returncode == 0, run.stderr[-2000:]
  table = run.stdout
  assert "sharing=none" in table and "attention (4 weight set(s))" in table


@pytest.mark.slow
def test_readme_summary_block_runs_as_written():
  """README.md's model_summary block, run as written: the released
  ALBERT-xxlarge v2's counts, as its prose says."""
  with open(f"{REPO}/README.md", encoding="utf-8") as f:
    blocks = re.findall(r"```sh\n(.*?)```", f.read(), re.S)
  (block,) = [b for b in blocks if "tools/model_summary.py" in b]
  python, *args = shlex.split(block)
  assert python == ".venv/bin/python", block
  run = helpers.run(args)
  assert run.returncode == 0, run.stderr[-2000:]
  data = json.loads(run.stdout)
  assert data["backbone_params"] == RELEASED["xxlarge"][0] == 222_595_584
  assert data["pretrainer_params"] == sum(RELEASED["xxlarge"]) == 223_158_450


@pytest.mark.slow
def test_cli_bad_gin_is_one_line_and_nonzero():
  run = helpers.run(
      [
          "-m",
          "albert.cli.model_summary",
          "--gin_file=gin/huge.gin",
      ],
  )
  assert run.returncode != 0
  assert run.stdout == ""
  assert "model_summary: error: gin file 'gin/huge.gin' not found" in run.stderr
  run = helpers.run(
      [
          "-m",
          "albert.cli.model_summary",
          "--gin_file=gin/base.gin",
          "--gin_param=AlbertConfig.num_heads=7",
      ],
  )
  assert run.returncode != 0
  assert "hidden_size=768 must be divisible by num_heads=7" in run.stderr
