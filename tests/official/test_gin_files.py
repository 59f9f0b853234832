"""parse_gin: layering, search paths and one-line errors."""

import gin
import pytest

from albert.modeling.config import AlbertConfig
from official.config.gin_files import GinConfigError, parse_gin
from tests.helpers import REPO


@pytest.fixture(autouse=True)
def _clear_gin():
  gin.clear_config()
  yield
  gin.clear_config()


def test_layering_later_wins_from_any_directory(tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  parse_gin(
      ["gin/base.gin", "gin/tiny.gin"],
      ["AlbertConfig.num_layers = 3"],
      search_paths=[REPO],
  )
  config = AlbertConfig()
  assert (config.hidden_size, config.num_layers, config.embedding_size) == (
      64,
      3,
      32,
  )


@pytest.mark.parametrize(
    "files,params,message",
    [
        (["gin/missing.gin"], [], "gin file 'gin/missing.gin' not found"),
        (
            [],
            ["AlbertConfig.hiden_size = 3"],
            "doesn't have a parameter named 'hiden_size'; did you mean "
            "'hidden_size'[?]$",
        ),
        ([], ["NoSuchThing.x = 1"], "No configurable matching 'NoSuchThing'.$"),
        (
            [],
            ["AlbertConfg.num_layers = 3"],
            "No configurable matching 'AlbertConfg'; did you mean "
            "'AlbertConfig'[?]$",
        ),
        ([], ["AlbertConfig.num_layers = "], "Unable to parse value"),
    ],
)
def test_errors_name_the_file_or_binding(files, params, message):
  with pytest.raises(GinConfigError, match=message) as info:
    parse_gin(files, params, search_paths=[REPO])
  assert "\n" not in str(info.value)


def test_syntax_error_in_a_file(tmp_path):
  bad = tmp_path / "bad.gin"
  bad.write_text("AlbertConfig.num_layers = = 3\n")
  with pytest.raises(GinConfigError, match=f"gin file '{bad}'"):
    parse_gin([str(bad)])
