"""Analytic FLOP counts of ALBERT, for benchmarks (achieved GFLOP/s)."""

from albert.modeling.config import AlbertConfig


def forward_flops_per_example(
    config: AlbertConfig,
    seq_length: int,
    num_predictions: int,
    num_classes: int = 2,
) -> int:
  """Multiply-adds x 2 of one example's forward pass through the pretrainer.

  Counts the matrix products (embedding projection, every layer's Q/K/V/output
  projections, attention scores and context, FFN, pooler, masked-LM transform
  and tied output at `num_predictions` positions, the `num_classes`-way head
  on the pooled output: SOP's 2, or a classifier's); element-wise ops are
  ignored, as is usual for FLOP-rate accounting. A sequence classifier is
  `num_predictions=0`.
  """
  t, e, h = seq_length, config.embedding_size, config.hidden_size
  ffn, v = config.intermediate_size, config.vocab_size
  blocks = config.num_layers * config.inner_group_num
  per_block = (
      4 * t * h * h  # Q, K, V, output projections
      + 2 * t * t * h  # scores QK^T and context PV
      + 2 * t * h * ffn
  )  # FFN in and out
  macs = (
      (t * e * h if e != h else 0)  # E -> H projection (none when E == H)
      + blocks * per_block
      + h * h  # pooler on [CLS]
      + num_predictions * (h * e + e * v)  # MLM transform, tied output
      + num_classes * h
  )  # SOP or classifier head
  return 2 * macs


def training_flops_per_example(
    config: AlbertConfig,
    seq_length: int,
    num_predictions: int,
    num_classes: int = 2,
) -> int:
  """Forward + backward: the usual 3x the forward pass."""
  return 3 * forward_flops_per_example(
      config, seq_length, num_predictions, num_classes
  )
