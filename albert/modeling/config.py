"""`AlbertConfig`: the architecture hyperparameters of one ALBERT model.

Field names follow the house vocabulary (`num_layers`, `num_heads`, ...) and are
exactly the keyword arguments of `AlbertEncoder`. The original release's
`albert_config.json` uses other names; `_JSON_NAMES` is the one table that
translates between the two.
"""

import dataclasses
import json
from typing import Any, Dict

from absl import logging
import gin
import tensorflow as tf

from official.io import atomic_write
from official.io import files
from official.modeling import activations

SHARING_MODES = ("all", "attention", "ffn", "none")

# albert_config.json key -> AlbertConfig field.
_JSON_NAMES = {
    "vocab_size": "vocab_size",
    "embedding_size": "embedding_size",
    "hidden_size": "hidden_size",
    "num_hidden_layers": "num_layers",
    "num_attention_heads": "num_heads",
    "intermediate_size": "intermediate_size",
    "num_hidden_groups": "num_hidden_groups",
    "inner_group_num": "inner_group_num",
    "hidden_act": "hidden_act",
    "hidden_dropout_prob": "dropout_rate",
    "attention_probs_dropout_prob": "attention_dropout_rate",
    "max_position_embeddings": "max_position_embeddings",
    "type_vocab_size": "type_vocab_size",
    "initializer_range": "initializer_range",
}
# Keys the original writes but its model ignores; accepted with these values.
_JSON_FIXED = {"down_scale_factor": 1}
# Our fields the original format lacks: read when present, written only when
# they differ from the original's behaviour (the dataclass default).
_JSON_EXTRA = ("sharing", "layer_norm_epsilon")


@gin.configurable
@dataclasses.dataclass(frozen=True)
class AlbertConfig:
  """ALBERT hyperparameters. Defaults are the released v2 ALBERT-base.

  Attributes:
    vocab_size: V, the SentencePiece vocabulary size.
    embedding_size: E, the factorized embedding width (paper section 3.1).
    hidden_size: H, the transformer width.
    num_layers: L, the number of layer applications (each applies
      `inner_group_num` blocks).
    num_heads: attention heads; must divide `hidden_size`.
    intermediate_size: FFN inner width.
    num_hidden_groups: G; layer l uses group int(l / L * G).
    inner_group_num: K, distinct blocks inside a group, applied in order.
    sharing: which parameters are shared across layers (paper Table 4):
      `all` (default), `attention`, `ffn` or `none`. The shared part follows
      the group rule; the unshared part gets its own weights per layer.
    hidden_act: FFN activation (`gelu` is the tanh approximation).
    dropout_rate: dropout on embeddings and sub-layer outputs.
    attention_dropout_rate: dropout on attention probabilities.
    max_position_embeddings: rows of the position table (longest sequence).
    type_vocab_size: number of segment ids.
    initializer_range: stddev of the truncated-normal initialiser.
    layer_norm_epsilon: LayerNorm epsilon.
  """

  vocab_size: int = 30000
  embedding_size: int = 128
  hidden_size: int = 768
  num_layers: int = 12
  num_heads: int = 12
  intermediate_size: int = 3072
  num_hidden_groups: int = 1
  inner_group_num: int = 1
  sharing: str = "all"
  hidden_act: str = "gelu"
  dropout_rate: float = 0.0
  attention_dropout_rate: float = 0.0
  max_position_embeddings: int = 512
  type_vocab_size: int = 2
  initializer_range: float = 0.02
  layer_norm_epsilon: float = 1e-12

  def __post_init__(self):
    for name in (
        "vocab_size",
        "embedding_size",
        "hidden_size",
        "num_layers",
        "num_heads",
        "intermediate_size",
        "num_hidden_groups",
        "inner_group_num",
        "max_position_embeddings",
        "type_vocab_size",
    ):
      value = getattr(self, name)
      if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name}={value!r} must be a positive integer")
    if self.hidden_size % self.num_heads:
      raise ValueError(
          f"hidden_size={self.hidden_size} must be divisible by "
          f"num_heads={self.num_heads}"
      )
    if self.num_hidden_groups > self.num_layers:
      raise ValueError(
          f"num_hidden_groups={self.num_hidden_groups} must be <= "
          f"num_layers={self.num_layers}"
      )
    if self.sharing not in SHARING_MODES:
      raise ValueError(
          f"sharing={self.sharing!r} is not one of {SHARING_MODES}"
      )
    if self.hidden_act not in activations.ACTIVATION_NAMES:
      raise ValueError(
          f"hidden_act={self.hidden_act!r} is not one of "
          f"{activations.ACTIVATION_NAMES}"
      )
    for name in ("dropout_rate", "attention_dropout_rate"):
      value = getattr(self, name)
      if not 0.0 <= value < 1.0:
        raise ValueError(f"{name}={value!r} must be in [0, 1)")
    for name in ("initializer_range", "layer_norm_epsilon"):
      value = getattr(self, name)
      if not value > 0:
        raise ValueError(f"{name}={value!r} must be > 0")

  @classmethod
  def explicit(cls, **fields) -> "AlbertConfig":
    """Builds a config from `fields`, the dataclass defaults for the rest.

    Every field is passed explicitly, so gin bindings active in the process
    cannot leak in (reading a file or a model must mean what it says).

    Raises:
      TypeError: a key is not an AlbertConfig field.
    """
    defaults = {f.name: f.default for f in dataclasses.fields(cls)}
    unknown = sorted(set(fields) - set(defaults))
    if unknown:
      raise TypeError(f"unknown arguments {unknown}: not AlbertConfig fields")
    return cls(**{**defaults, **fields})

  def to_dict(self) -> Dict[str, Any]:
    """The fields as a dict: exactly the keyword arguments of AlbertEncoder."""
    return dataclasses.asdict(self)

  def replace(self, **changes) -> "AlbertConfig":
    """A copy with `changes` applied (and validated)."""
    return dataclasses.replace(self, **changes)

  # --- The original albert_config.json format -------------------------------

  @classmethod
  def from_original_dict(cls, data: Dict[str, Any]) -> "AlbertConfig":
    """Reads the original `albert_config.json` keys; unknown keys are logged."""
    kwargs = {}
    for key, value in data.items():
      if key in _JSON_NAMES:
        kwargs[_JSON_NAMES[key]] = value
      elif key in _JSON_FIXED:
        if value != _JSON_FIXED[key]:
          raise ValueError(
              f"{key}={value!r} is not supported (only "
              f"{_JSON_FIXED[key]!r})"
          )
      elif key in _JSON_EXTRA:
        kwargs[key] = value
      else:
        logging.info("albert_config: ignoring unused key %s=%r", key, value)
    return cls.explicit(**kwargs)

  def to_original_dict(self) -> Dict[str, Any]:
    """The original `albert_config.json` keys, plus our extra fields where
    they differ from the original's behaviour."""
    fields = self.to_dict()
    data = {key: fields[field] for key, field in _JSON_NAMES.items()}
    data.update(_JSON_FIXED)
    defaults = {f.name: f.default for f in dataclasses.fields(self)}
    data.update(
        {
            key: fields[key]
            for key in _JSON_EXTRA
            if fields[key] != defaults[key]
        }
    )
    return data

  @classmethod
  def from_json_file(cls, path: str) -> "AlbertConfig":
    """Reads an `albert_config.json`; errors name the file."""
    try:
      data = json.loads(files.read_text(path))
    except (OSError, tf.errors.OpError, json.JSONDecodeError) as e:
      raise ValueError(f"cannot read ALBERT config {path}: {e}") from e
    if not isinstance(data, dict):
      raise ValueError(f"ALBERT config {path} must hold a JSON object")
    try:
      return cls.from_original_dict(data)
    except (TypeError, ValueError) as e:
      raise ValueError(f"ALBERT config {path}: {e}") from e

  def to_json_file(self, path: str) -> None:
    """Writes an `albert_config.json` atomically (temporary name, rename)."""
    atomic_write.write_atomic(
        path,
        json.dumps(self.to_original_dict(), indent=2, sort_keys=True) + "\n",
    )
