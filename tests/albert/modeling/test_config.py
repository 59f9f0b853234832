"""AlbertConfig: validation, gin, and the original albert_config.json format."""

import dataclasses
import json

import gin
import pytest

from albert.modeling.config import AlbertConfig

# albert_config.json of the released albert_base v2, with its unused keys.
RELEASED_BASE_V2 = {
    "attention_probs_dropout_prob": 0,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0,
    "embedding_size": 128,
    "hidden_size": 768,
    "initializer_range": 0.02,
    "intermediate_size": 3072,
    "max_position_embeddings": 512,
    "num_attention_heads": 12,
    "num_hidden_layers": 12,
    "num_hidden_groups": 1,
    "net_structure_type": 0,
    "gap_size": 0,
    "num_memory_blocks": 0,
    "inner_group_num": 1,
    "down_scale_factor": 1,
    "type_vocab_size": 2,
    "vocab_size": 30000,
}


def test_defaults_are_albert_base_v2():
  config = AlbertConfig()
  assert (
      config.vocab_size,
      config.embedding_size,
      config.hidden_size,
      config.num_layers,
      config.num_heads,
      config.intermediate_size,
  ) == (30000, 128, 768, 12, 12, 3072)
  assert config.sharing == "all" and config.hidden_act == "gelu"
  with pytest.raises(dataclasses.FrozenInstanceError):
    config.hidden_size = 5


def test_reads_the_released_file_and_logs_unused_keys(tmp_path, caplog):
  path = tmp_path / "albert_config.json"
  path.write_text(json.dumps(RELEASED_BASE_V2))
  # The absl logger's own level too: absl's verbosity is whatever earlier
  # code in the process left it at.
  with caplog.at_level("INFO", logger="absl"):
    config = AlbertConfig.from_json_file(str(path))
  assert config == AlbertConfig()
  for key in ("net_structure_type", "gap_size", "num_memory_blocks"):
    assert key in caplog.text


def test_json_round_trip(tmp_path):
  config = AlbertConfig(
      hidden_size=64,
      num_layers=5,
      num_heads=4,
      intermediate_size=128,
      num_hidden_groups=2,
      inner_group_num=3,
      dropout_rate=0.1,
      attention_dropout_rate=0.2,
      vocab_size=123,
  )
  path = tmp_path / "albert_config.json"
  config.to_json_file(str(path))
  data = json.loads(path.read_text())
  # Written with the original names, so the original code can read it.
  assert data["num_hidden_layers"] == 5 and data["num_attention_heads"] == 4
  assert data["hidden_dropout_prob"] == 0.1
  assert data["attention_probs_dropout_prob"] == 0.2
  assert data["down_scale_factor"] == 1
  assert "num_layers" not in data and "sharing" not in data
  assert AlbertConfig.from_json_file(str(path)) == config
  assert not list(tmp_path.glob("*.tmp*"))
  ablation = config.replace(sharing="ffn", layer_norm_epsilon=1e-6)
  ablation.to_json_file(str(path))
  assert AlbertConfig.from_json_file(str(path)) == ablation


def test_original_dict_round_trip_of_released_keys():
  data = AlbertConfig.from_original_dict(RELEASED_BASE_V2).to_original_dict()
  expected = {
      k: v
      for k, v in RELEASED_BASE_V2.items()
      if k not in ("net_structure_type", "gap_size", "num_memory_blocks")
  }
  assert data == expected


@pytest.mark.parametrize(
    "changes,message",
    [
        (
            dict(hidden_size=770),
            "hidden_size=770 must be divisible by num_heads=12",
        ),
        (dict(sharing="layers"), "sharing='layers' is not one of"),
        (dict(num_layers=-1), "num_layers=-1 must be a positive integer"),
        (dict(vocab_size=0), "vocab_size=0 must be a positive integer"),
        (
            dict(embedding_size=12.5),
            "embedding_size=12.5 must be a positive integer",
        ),
        (dict(dropout_rate=1.0), r"dropout_rate=1.0 must be in \[0, 1\)"),
        (dict(hidden_act="gleu"), "hidden_act='gleu' is not one of"),
        (
            dict(num_hidden_groups=13),
            "num_hidden_groups=13 must be <= num_layers=12",
        ),
        (dict(initializer_range=0.0), "initializer_range=0.0 must be > 0"),
    ],
)
def test_bad_values_name_the_field(changes, message):
  with pytest.raises(ValueError, match=message):
    AlbertConfig(**changes)


def test_bad_json_files(tmp_path):
  bad = tmp_path / "bad.json"
  bad.write_text("{not json")
  with pytest.raises(ValueError, match=f"cannot read ALBERT config {bad}"):
    AlbertConfig.from_json_file(str(bad))
  bad.write_text(json.dumps({**RELEASED_BASE_V2, "hidden_size": 770}))
  with pytest.raises(ValueError, match=f"{bad}: hidden_size=770 must be"):
    AlbertConfig.from_json_file(str(bad))
  bad.write_text(json.dumps({**RELEASED_BASE_V2, "down_scale_factor": 2}))
  with pytest.raises(ValueError, match="down_scale_factor=2 is not supported"):
    AlbertConfig.from_json_file(str(bad))


def test_gin_binds_fields_but_not_json_loading():
  gin.clear_config()
  try:
    gin.parse_config(
        "AlbertConfig.num_layers = 3\nAlbertConfig.sharing = 'ffn'"
    )
    assert AlbertConfig().num_layers == 3
    # A file read under active gin bindings still means what the file says.
    assert AlbertConfig.from_original_dict(RELEASED_BASE_V2) == AlbertConfig(
        num_layers=12, sharing="all"
    )
  finally:
    gin.clear_config()
