"""`SharedTransformerBlock`: L transformer layers with shared weights."""

from typing import List, Tuple

import tf_keras

from official.modeling import recompute
from official.modeling.no_autograph import no_autograph

from albert.modeling import attention as attention_lib
from albert.modeling import config as config_lib
from albert.modeling.attention import AttentionBlock
from albert.modeling.feed_forward import FeedForwardBlock


def group_of_layer(layer: int, num_layers: int, num_hidden_groups: int) -> int:
  """The group of layer `layer` (0-based): int(l / L * G), as the original.

  The float expression is kept on purpose so that every (L, G), including L
  not divisible by G, maps exactly as the original code does.
  """
  return int(layer / num_layers * num_hidden_groups)


class SharedTransformerBlock(tf_keras.layers.Layer):
  """L post-LN transformer layers whose weights are shared (paper section 3.1).

  Each of the L layers applies K = `inner_group_num` blocks in order; a block
  is an `AttentionBlock` followed by a `FeedForwardBlock`. Which weights a
  block uses depends on `sharing` (paper Table 4):

  - the shared part(s) follow the group rule: layer l, inner block k uses the
    weights of group g = int(l / L * G), inner index k (G * K sets in all);
  - the unshared part(s) get their own weights per layer: index l * K + k.

  `all` shares attention and FFN (the ALBERT default: with G = K = 1, one
  block's weights serve every layer); `attention` shares only attention,
  `ffn` only the FFN, `none` nothing (BERT-style).

  Args:
    num_layers: L.
    hidden_size, num_heads, intermediate_size, hidden_act, initializer_range,
    dropout_rate, attention_dropout_rate, layer_norm_epsilon: as
      `AttentionBlock` / `FeedForwardBlock`.
    num_hidden_groups: G.
    inner_group_num: K.
    sharing: `all`, `attention`, `ffn` or `none`.

  Call args:
    x: [B, T, H] embeddings.
    attention_mask: [B, T], 1 for real tokens.
    query_positions: optional int [B, Q]: the last block runs only at these
      rows (its keys and values at every row); see `AttentionBlock`.

  Returns:
    A list of L * K tensors [B, T, H] (float32), the output of every block
    application in order; the last one is the sequence output ([B, Q, H]
    with `query_positions`).
  """

  def __init__(
      self,
      *,
      num_layers: int,
      hidden_size: int,
      num_heads: int,
      intermediate_size: int,
      num_hidden_groups: int = 1,
      inner_group_num: int = 1,
      sharing: str = "all",
      hidden_act: str = "gelu",
      initializer_range: float = 0.02,
      dropout_rate: float = 0.0,
      attention_dropout_rate: float = 0.0,
      layer_norm_epsilon: float = 1e-12,
      **kwargs,
  ):
    super().__init__(**kwargs)
    if sharing not in config_lib.SHARING_MODES:
      raise ValueError(
          f"sharing={sharing!r} is not one of {config_lib.SHARING_MODES}"
      )
    if not 0 < num_hidden_groups <= num_layers:
      raise ValueError(
          f"num_hidden_groups={num_hidden_groups} must be in "
          f"[1, num_layers={num_layers}]"
      )
    if inner_group_num <= 0:
      raise ValueError(f"inner_group_num={inner_group_num} must be > 0")
    self.num_layers = num_layers
    self.hidden_size = hidden_size
    self.num_heads = num_heads
    self.intermediate_size = intermediate_size
    self.num_hidden_groups = num_hidden_groups
    self.inner_group_num = inner_group_num
    self.sharing = sharing
    self.hidden_act = hidden_act
    self.initializer_range = initializer_range
    self.dropout_rate = dropout_rate
    self.attention_dropout_rate = attention_dropout_rate
    self.layer_norm_epsilon = layer_norm_epsilon

    num_attention, num_ffn = self.num_weight_sets()
    self.attention_blocks = [
        AttentionBlock(
            hidden_size=hidden_size,
            num_heads=num_heads,
            initializer_range=initializer_range,
            dropout_rate=dropout_rate,
            attention_dropout_rate=attention_dropout_rate,
            layer_norm_epsilon=layer_norm_epsilon,
            name=f"attention_{i}",
        )
        for i in range(num_attention)
    ]
    self.ffn_blocks = [
        FeedForwardBlock(
            hidden_size=hidden_size,
            intermediate_size=intermediate_size,
            hidden_act=hidden_act,
            initializer_range=initializer_range,
            dropout_rate=dropout_rate,
            layer_norm_epsilon=layer_norm_epsilon,
            name=f"ffn_{i}",
        )
        for i in range(num_ffn)
    ]

  def _shares(self, part: str) -> bool:
    return self.sharing in ("all", part)

  def num_weight_sets(self) -> Tuple[int, int]:
    """How many distinct (attention, FFN) weight sets the stack holds."""
    shared = self.num_hidden_groups * self.inner_group_num
    per_layer = self.num_layers * self.inner_group_num
    return (
        shared if self._shares("attention") else per_layer,
        shared if self._shares("ffn") else per_layer,
    )

  def weight_indices(self, layer: int, inner: int) -> Tuple[int, int]:
    """(attention index, FFN index) of layer `layer`, inner block `inner`."""
    group = group_of_layer(layer, self.num_layers, self.num_hidden_groups)
    shared = group * self.inner_group_num + inner
    own = layer * self.inner_group_num + inner
    return (
        shared if self._shares("attention") else own,
        shared if self._shares("ffn") else own,
    )

  def recompute_refusal(self):
    """Why TrainerConfig.recompute cannot run these blocks (None: it can)."""
    return recompute.dropout_refusal(
        "the transformer blocks",
        dropout_rate=self.dropout_rate,
        attention_dropout_rate=self.attention_dropout_rate,
    )

  @no_autograph
  def call(
      self, x, attention_mask, training=None, query_positions=None
  ) -> List:
    blocks = []
    last = (self.num_layers - 1, self.inner_group_num - 1)
    # Every block's reshapes and the mask's bias, once for all L * K blocks.
    shapes = attention_lib.sequence_shapes(x, attention_mask, self.num_heads)
    for layer in range(self.num_layers):
      for inner in range(self.inner_group_num):
        attention_index, ffn_index = self.weight_indices(layer, inner)
        rows = query_positions if (layer, inner) == last else None

        def run(x, attention=attention_index, ffn=ffn_index, rows=rows):
          x = self.attention_blocks[attention](
              x,
              attention_mask,
              training=training,
              query_positions=rows,
              shapes=shapes,
          )  # [B, T, H] (or [B, Q, H])
          hidden_shape = shapes.hidden if rows is None else None
          return self.ffn_blocks[ffn](
              x, training=training, hidden_shape=hidden_shape
          )

        blocks.append(run)
    # With TrainerConfig.recompute, only each block's input is kept for the
    # backward pass (official/modeling/recompute.py).
    return recompute.sequential(blocks, x)

  def get_config(self):
    config = super().get_config()
    config.update(
        {
            "num_layers": self.num_layers,
            "hidden_size": self.hidden_size,
            "num_heads": self.num_heads,
            "intermediate_size": self.intermediate_size,
            "num_hidden_groups": self.num_hidden_groups,
            "inner_group_num": self.inner_group_num,
            "sharing": self.sharing,
            "hidden_act": self.hidden_act,
            "initializer_range": self.initializer_range,
            "dropout_rate": self.dropout_rate,
            "attention_dropout_rate": self.attention_dropout_rate,
            "layer_norm_epsilon": self.layer_norm_epsilon,
        }
    )
    return config
