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

  What ours computes: the last block only at [CLS] and the predicted
  positions (`AlbertEncoder`'s `output_positions`), its keys and values at
  every token. A peer that runs the last block at every token does more
  work than this count for the same examples.
  """
  t, e, h = seq_length, config.embedding_size, config.hidden_size
  ffn, v = config.intermediate_size, config.vocab_size
  blocks = config.num_layers * config.inner_group_num

  def block(rows):  # queries at `rows` positions, keys and values at t
    return (
        2 * t * h * h  # K, V projections
        + 2 * rows * h * h  # Q, output projections
        + 2 * rows * t * h  # scores QK^T and context PV
        + 2 * rows * h * ffn  # FFN in and out
    )

  macs = (
      (t * e * h if e != h else 0)  # E -> H projection (none when E == H)
      + (blocks - 1) * block(t)
      + block(1 + num_predictions)  # the last block: [CLS] + predictions
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
