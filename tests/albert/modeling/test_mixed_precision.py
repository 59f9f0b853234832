"""mixed_float16 / mixed_bfloat16: softmax and LayerNorm stay float32."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from albert.modeling.encoder import AlbertEncoder
from albert.modeling.pretrainer import AlbertPretrainer

TINY = dict(
    vocab_size=60,
    embedding_size=8,
    hidden_size=32,
    num_layers=2,
    num_heads=4,
    intermediate_size=64,
    max_position_embeddings=16,
)


@pytest.fixture(params=["mixed_float16", "mixed_bfloat16"])
def policy(request):
  tf_keras.mixed_precision.set_global_policy(request.param)
  yield request.param
  tf_keras.mixed_precision.set_global_policy("float32")


def _inputs():
  rng = np.random.default_rng(0)
  ids = rng.integers(0, TINY["vocab_size"], size=(2, 9))
  mask = np.ones_like(ids)
  mask[1, 6:] = 0
  return {
      "input_word_ids": tf.constant(ids, tf.int32),
      "input_mask": tf.constant(mask, tf.int32),
      "input_type_ids": tf.zeros([2, 9], tf.int32),
      "masked_lm_positions": tf.constant([[1, 2], [3, 0]], tf.int32),
  }


def test_builds_runs_and_matches_float32(policy):
  mixed = AlbertPretrainer(AlbertEncoder(**TINY))
  inputs = _inputs()

  def outputs(model):
    return dict(model(inputs), **model.encoder(inputs))

  out = outputs(mixed)
  compute = tf.float16 if policy == "mixed_float16" else tf.bfloat16
  assert (
      mixed.encoder.transformer.attention_blocks[0].query.compute_dtype
      == compute
  )
  # Master weights stay float32.
  assert all(v.dtype == tf.float32 for v in mixed.trainable_variables)
  for name in (
      "mlm_logits",
      "sentence_order_logits",
      "sequence_output",
      "pooled_output",
  ):
    assert out[name].dtype == tf.float32, name
    assert np.all(np.isfinite(out[name].numpy())), name

  tf_keras.mixed_precision.set_global_policy("float32")
  full = AlbertPretrainer(AlbertEncoder(**TINY))
  full(inputs)
  full.set_weights(mixed.get_weights())
  reference = outputs(full)
  tolerance = 0.05 if policy == "mixed_float16" else 0.3
  for name in ("sequence_output", "mlm_logits"):
    np.testing.assert_allclose(
        out[name].numpy(), reference[name].numpy(), atol=tolerance, err_msg=name
    )


def test_layer_norms_are_float32(policy):
  del policy
  encoder = AlbertEncoder(**TINY)
  encoder(encoder.dummy_inputs())
  norms = [
      l
      for l in encoder._flatten_layers()
      if isinstance(l, tf_keras.layers.LayerNormalization)
  ]
  assert len(norms) == 3  # embeddings, attention, FFN
  assert all(l.compute_dtype == "float32" for l in norms)


def test_softmax_runs_in_float32(policy):
  del policy
  encoder = AlbertEncoder(**TINY)
  inputs = {k: v for k, v in _inputs().items() if k != "masked_lm_positions"}
  graph = tf.function(encoder).get_concrete_function(inputs).graph
  softmaxes = [op for op in graph.get_operations() if op.type == "Softmax"]
  assert softmaxes, "no softmax in the traced encoder"
  assert all(op.get_attr("T") == tf.float32 for op in softmaxes)
  matmuls = [
      op
      for op in graph.get_operations()
      if op.type in ("MatMul", "BatchMatMulV2", "Einsum")
  ]
  assert any(op.get_attr("T") != tf.float32 for op in matmuls)
