"""Analytic FLOP count of ALBERT-base against a hand expansion."""

from albert.modeling.config import AlbertConfig
from albert.modeling import flops


def test_base_at_128_is_about_64_gflop_per_training_example():
  config = AlbertConfig()  # base
  t, h, e, f, v = 128, 768, 128, 3072, 30000
  per_layer = 4 * t * h * h + 2 * t * t * h + 2 * t * h * f
  # The last layer: K and V at all 128 tokens, the rest at [CLS] + 20.
  last = 2 * t * h * h + 21 * (2 * h * h + 2 * t * h + 2 * h * f)
  forward = 2 * (
      t * e * h + 11 * per_layer + last + h * h + 20 * (h * e + e * v) + 2 * h
  )
  assert flops.forward_flops_per_example(config, 128, 20) == forward
  total = flops.training_flops_per_example(config, 128, 20)
  assert total == 3 * forward
  assert 63e9 < total < 65e9  # about 64 GFLOP per ALBERT-base example


def test_inner_groups_multiply_the_block_cost():
  one = flops.forward_flops_per_example(AlbertConfig(), 64, 5)
  two = flops.forward_flops_per_example(AlbertConfig(inner_group_num=2), 64, 5)
  block = 2 * (4 * 64 * 768 * 768 + 2 * 64 * 64 * 768 + 2 * 64 * 768 * 3072)
  assert two - one == 12 * block


def test_a_classifier_has_no_masked_lm_and_its_own_head():
  config = AlbertConfig()
  pretraining = flops.forward_flops_per_example(config, 128, 20)
  classifier = flops.forward_flops_per_example(config, 128, 0, num_classes=3)
  mlm = 2 * 20 * (768 * 128 + 128 * 30000)
  # The classifier's last block runs at [CLS] alone, the pretrainer's at 21.
  last_rows = 2 * 20 * (2 * 768 * 768 + 2 * 128 * 768 + 2 * 768 * 3072)
  assert pretraining - classifier == mlm + last_rows + 2 * (2 - 3) * 768
