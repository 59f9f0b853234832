"""Cross-layer sharing: variable counts and which layers hold which weights."""

import numpy as np
import pytest

from albert.modeling.encoder import AlbertEncoder
from albert.modeling.shared_transformer_block import group_of_layer

TINY = dict(
    vocab_size=40,
    embedding_size=8,
    hidden_size=16,
    num_heads=2,
    intermediate_size=24,
    max_position_embeddings=8,
)
EMBEDDING_VARS = (
    7  # word, position, type, LN gamma/beta, projection kernel/bias
)
ATTENTION_VARS = 10  # q, k, v, output (kernel, bias) + LN (gamma, beta)
FFN_VARS = 6  # intermediate, output (kernel, bias) + LN (gamma, beta)
POOLER_VARS = 2
# Hand-computed scalars of one block at H=16, FFN=24.
ATTENTION_PARAMS = 4 * (16 * 16 + 16) + 2 * 16
FFN_PARAMS = 16 * 24 + 24 + 24 * 16 + 16 + 2 * 16


def _built(num_layers, **overrides):
  encoder = AlbertEncoder(**TINY, num_layers=num_layers, **overrides)
  encoder(encoder.dummy_inputs(seq_length=4))
  return encoder


def _block_params(encoder):
  return sum(int(np.prod(v.shape)) for v in encoder.transformer.weights)


@pytest.mark.parametrize("num_layers", [1, 2, 6, 12])
def test_all_shared_is_independent_of_depth(num_layers):
  encoder = _built(num_layers)
  assert len(encoder.trainable_variables) == (
      EMBEDDING_VARS + ATTENTION_VARS + FFN_VARS + POOLER_VARS
  )
  assert _block_params(encoder) == ATTENTION_PARAMS + FFN_PARAMS


@pytest.mark.parametrize(
    "overrides,attention_sets,ffn_sets",
    [
        (dict(num_hidden_groups=2), 2, 2),
        (dict(num_hidden_groups=3), 3, 3),  # 5 layers, not divisible by 3
        (dict(inner_group_num=2), 2, 2),
        (dict(num_hidden_groups=2, inner_group_num=3), 6, 6),
        (dict(sharing="attention"), 1, 5),
        (dict(sharing="ffn"), 5, 1),
        (dict(sharing="none"), 5, 5),
        (dict(sharing="attention", inner_group_num=2), 2, 10),
    ],
)
def test_variable_counts(overrides, attention_sets, ffn_sets):
  encoder = _built(5, **overrides)
  stack = encoder.transformer
  assert stack.num_weight_sets() == (attention_sets, ffn_sets)
  assert len(stack.attention_blocks) == attention_sets
  assert len(stack.ffn_blocks) == ffn_sets
  assert len(encoder.trainable_variables) == (
      EMBEDDING_VARS
      + POOLER_VARS
      + attention_sets * ATTENTION_VARS
      + ffn_sets * FFN_VARS
  )
  assert _block_params(encoder) == (
      attention_sets * ATTENTION_PARAMS + ffn_sets * FFN_PARAMS
  )


def test_every_weight_set_is_used():
  """No dead weights: perturbing any set changes the output."""
  encoder = _built(5, num_hidden_groups=3, sharing="attention")
  inputs = encoder.dummy_inputs(seq_length=4)
  base = encoder(inputs)["sequence_output"].numpy()
  rng = np.random.default_rng(0)
  for block in (
      encoder.transformer.attention_blocks + encoder.transformer.ffn_blocks
  ):
    kernel = block.output_dense.kernel
    # Random, not constant: LayerNorm would cancel a shift common to all units.
    delta = rng.normal(size=kernel.shape).astype(np.float32)
    kernel.assign_add(delta)
    changed = encoder(inputs)["sequence_output"].numpy()
    kernel.assign_sub(delta)
    assert np.abs(changed - base).max() > 1e-4, block.name


def test_group_rule_is_the_original_float_expression():
  assert [group_of_layer(l, 12, 1) for l in range(12)] == [0] * 12
  assert [group_of_layer(l, 4, 2) for l in range(4)] == [0, 0, 1, 1]
  assert [group_of_layer(l, 5, 3) for l in range(5)] == [0, 0, 1, 1, 2]
  # int(1 / 49 * 49) == 0 in floating point, as in the original code.
  assert group_of_layer(1, 49, 49) == 0


@pytest.mark.parametrize(
    "overrides,message",
    [
        (dict(sharing="layers"), r"sharing='layers' is not one of"),
        (
            dict(num_hidden_groups=6),
            r"num_hidden_groups=6 must be <= num_layers=5",
        ),
        (
            dict(inner_group_num=0),
            r"inner_group_num=0 must be a positive integer",
        ),
    ],
)
def test_bad_sharing_arguments(overrides, message):
  with pytest.raises(ValueError, match=message):
    AlbertEncoder(**TINY, num_layers=5, **overrides)
