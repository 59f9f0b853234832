"""The Keras encoder and heads against an independent numpy forward pass."""

import numpy as np
import pytest
import tensorflow as tf

from official.modeling import fusion

from albert.modeling.config import AlbertConfig
from albert.modeling.encoder import AlbertEncoder
from albert.modeling.pretrainer import AlbertPretrainer
from tests.albert.modeling import numpy_reference as ref

TINY = dict(
    vocab_size=50,
    embedding_size=8,
    hidden_size=16,
    num_layers=3,
    num_heads=4,
    intermediate_size=32,
    max_position_embeddings=16,
)

# Hand-computed block -> (attention weights, FFN weights) tables, per config.
# group(l) = int(l / L * G): L=3, G=2 -> groups 0, 0, 1.
CASES = {
    "all_shared": (dict(), [(0, 0)] * 3),
    # E == H: no embedding projection, as the original.
    "e_equals_h": (dict(embedding_size=16), [(0, 0)] * 3),
    "groups_and_inner": (
        dict(num_hidden_groups=2, inner_group_num=2),
        [(0, 0), (1, 1), (0, 0), (1, 1), (2, 2), (3, 3)],
    ),
    "attention_only": (dict(sharing="attention"), [(0, 0), (0, 1), (0, 2)]),
    "ffn_only": (dict(sharing="ffn"), [(0, 0), (1, 0), (2, 0)]),
    "none": (dict(sharing="none"), [(0, 0), (1, 1), (2, 2)]),
    "groups_attention_only": (
        dict(num_hidden_groups=2, sharing="attention"),
        [(0, 0), (0, 1), (1, 2)],
    ),
}


def _inputs(batch=3, length=7, seed=0):
  rng = np.random.default_rng(seed)
  word_ids = rng.integers(5, TINY["vocab_size"], size=(batch, length))
  type_ids = (
      (np.arange(length)[None] >= length // 2).astype(np.int64).repeat(batch, 0)
  )
  lengths = np.array([length, length - 2, 3])[:batch]
  mask = (np.arange(length)[None] < lengths[:, None]).astype(np.int64)
  return word_ids, mask, type_ids


def _as_tf(word_ids, mask, type_ids):
  return {
      "input_word_ids": tf.constant(word_ids, tf.int32),
      "input_mask": tf.constant(mask, tf.int32),
      "input_type_ids": tf.constant(type_ids, tf.int32),
  }


@pytest.mark.parametrize("case", sorted(CASES))
def test_encoder_matches_numpy(case):
  overrides, mapping = CASES[case]
  tf.random.set_seed(1)
  encoder = AlbertEncoder(**{**TINY, **overrides})
  word_ids, mask, type_ids = _inputs()
  out = encoder(_as_tf(word_ids, mask, type_ids))
  seq, pooled, layers = ref.encoder(encoder, word_ids, mask, type_ids, mapping)
  np.testing.assert_allclose(out["sequence_output"].numpy(), seq, atol=1e-5)
  np.testing.assert_allclose(out["pooled_output"].numpy(), pooled, atol=1e-5)
  assert len(out["encoder_outputs"]) == len(mapping)
  for got, want in zip(out["encoder_outputs"], layers):
    np.testing.assert_allclose(got.numpy(), want, atol=1e-5)


def test_weight_indices_follow_the_original_rule():
  # L=5, G=3: int(l / 5 * 3) = 0, 0, 1, 1, 2 (L not divisible by G).
  encoder = AlbertEncoder(**{**TINY, "num_layers": 5}, num_hidden_groups=3)
  got = [encoder.transformer.weight_indices(l, 0)[0] for l in range(5)]
  assert got == [0, 0, 1, 1, 2]
  for case, (overrides, mapping) in CASES.items():
    stack = AlbertEncoder(**{**TINY, **overrides}).transformer
    k = stack.inner_group_num
    got = [stack.weight_indices(l, i) for l in range(3) for i in range(k)]
    assert got == mapping, case


def test_padding_is_masked():
  """Real positions do not see padded keys: output equals the unpadded run."""
  encoder = AlbertEncoder(**TINY)
  word_ids, mask, type_ids = _inputs(batch=1, length=7)
  mask[:, 4:] = 0
  padded = encoder(_as_tf(word_ids, mask, type_ids))["sequence_output"].numpy()
  other = word_ids.copy()
  other[:, 4:] = 7  # different garbage under the padding
  padded2 = encoder(_as_tf(other, mask, type_ids))["sequence_output"].numpy()
  short = encoder(_as_tf(word_ids[:, :4], mask[:, :4], type_ids[:, :4]))
  np.testing.assert_allclose(
      padded[:, :4], short["sequence_output"].numpy(), atol=1e-5
  )
  np.testing.assert_allclose(padded[:, :4], padded2[:, :4], atol=1e-5)
  # Without the mask the garbage leaks in.
  unmasked = encoder(_as_tf(other, np.ones_like(mask), type_ids))
  assert (
      np.abs(unmasked["sequence_output"].numpy()[:, :4] - padded[:, :4]).max()
      > 1e-3
  )


def test_pretrainer_heads_match_numpy():
  encoder = AlbertEncoder(**TINY, num_hidden_groups=2)
  pretrainer = AlbertPretrainer(encoder)
  word_ids, mask, type_ids = _inputs()
  positions = np.array([[1, 2, 5], [0, 3, 4], [1, 2, 0]])
  inputs = _as_tf(word_ids, mask, type_ids)
  inputs["masked_lm_positions"] = tf.constant(positions, tf.int32)
  out = pretrainer(inputs)
  mapping = [(0, 0), (0, 0), (1, 1)]  # L=3, G=2, K=1
  seq, pooled, _ = ref.encoder(encoder, word_ids, mask, type_ids, mapping)
  table = encoder.embedding_table.numpy()
  mlm = ref.masked_lm(pretrainer.masked_lm, table, seq, positions)
  sop = ref.sentence_order(pretrainer.sentence_order, pooled)
  assert out["mlm_logits"].shape == (3, 3, TINY["vocab_size"])
  np.testing.assert_allclose(out["mlm_logits"].numpy(), mlm, atol=1e-5)
  np.testing.assert_allclose(
      out["sentence_order_logits"].numpy(), sop, atol=1e-5
  )


@pytest.mark.parametrize("fused", [False, True], ids=["plain", "fused"])
def test_output_positions_give_the_full_values_and_gradients(fused):
  # The last block run at [CLS] and the asked rows only (what the pretrainer
  # and the classifiers do) against the full last block, then a gather:
  # repeated and padded positions, a last block of its own group.
  encoder = AlbertEncoder(**TINY, num_hidden_groups=2, inner_group_num=2)
  inputs = _as_tf(*_inputs())
  encoder(inputs)
  positions = tf.constant([[1, 2, 5], [0, 3, 4], [1, 1, 6]], tf.int32)
  weights = tf.random.stateless_normal([3, 3, 16], seed=[1, 2])

  def run(gathered):
    with tf.GradientTape() as tape, fusion.scope(fused):
      if gathered:
        out = encoder(inputs, output_positions=positions)
        rows = out["sequence_output"]
      else:
        out = encoder(inputs)
        rows = tf.gather(out["sequence_output"], positions, batch_dims=1)
      loss = tf.reduce_sum(rows * weights) + tf.reduce_sum(
          out["pooled_output"] ** 2
      )
    grads = tape.gradient(loss, encoder.trainable_variables)
    return [rows, out["pooled_output"]] + grads

  for got, want in zip(run(True), run(False)):
    got, want = tf.convert_to_tensor(got).numpy(), tf.convert_to_tensor(want)
    scale = np.abs(want.numpy()).max() + 1.0  # float32 round-off of sums
    np.testing.assert_allclose(got, want.numpy(), atol=2e-6 * scale)
  cls_only = encoder(inputs, output_positions=tf.zeros([3, 0], tf.int32))
  assert cls_only["sequence_output"].shape == (3, 0, 16)
  np.testing.assert_allclose(
      cls_only["pooled_output"].numpy(), run(False)[1].numpy(), atol=1e-6
  )


def test_mlm_output_is_tied_to_word_embeddings():
  encoder = AlbertEncoder(**TINY)
  pretrainer = AlbertPretrainer(encoder)
  assert pretrainer.masked_lm.embedding_table is encoder.embedding_table
  inputs = pretrainer.dummy_inputs(
      batch_size=1, seq_length=4, num_predictions=2
  )
  before = pretrainer(inputs)["mlm_logits"].numpy()
  encoder.embedding_table.assign(encoder.embedding_table * 2.0)
  after = pretrainer(inputs)["mlm_logits"].numpy()
  assert np.abs(after - before).max() > 1e-3
  # One copy of the table in the model, not two.
  assert sum(v is encoder.embedding_table for v in pretrainer.weights) == 1


def test_dropout_comes_from_the_config():
  word_ids, mask, type_ids = _inputs()
  inputs = _as_tf(word_ids, mask, type_ids)
  no_dropout = AlbertEncoder(**TINY)
  a = no_dropout(inputs, training=True)["sequence_output"].numpy()
  b = no_dropout(inputs, training=False)["sequence_output"].numpy()
  np.testing.assert_array_equal(a, b)
  dropout = AlbertEncoder(**TINY, dropout_rate=0.3, attention_dropout_rate=0.3)
  a = dropout(inputs, training=True)["sequence_output"].numpy()
  b = dropout(inputs, training=False)["sequence_output"].numpy()
  assert np.abs(a - b).max() > 1e-3


def test_too_long_input_is_a_clear_error():
  encoder = AlbertEncoder(**TINY)
  with pytest.raises(
      ValueError,
      match="sequence length 17 exceeds max_position_embeddings=16",
  ):
    encoder(encoder.dummy_inputs(seq_length=17))


def test_bad_arguments_are_reported_by_name():
  with pytest.raises(
      ValueError, match="hidden_size=16 must be divisible by num_heads=5"
  ):
    AlbertEncoder(**{**TINY, "num_heads": 5})
  with pytest.raises(TypeError, match="unknown arguments.*num_hidden_layers"):
    AlbertEncoder(**TINY, num_hidden_layers=3)


def test_configs_round_trip_through_keras_config():
  encoder = AlbertEncoder(**TINY, sharing="ffn", num_hidden_groups=2)
  clone = AlbertEncoder.from_config(encoder.get_config())
  assert clone.config == encoder.config
  pretrainer = AlbertPretrainer(encoder)
  clone = AlbertPretrainer.from_config(pretrainer.get_config())
  assert clone.encoder.config == encoder.config
  stack = encoder.transformer
  stack_clone = type(stack).from_config(stack.get_config())
  assert stack_clone.get_config() == stack.get_config()
  for layer in (
      encoder.embeddings,
      stack.attention_blocks[0],
      stack.ffn_blocks[0],
      pretrainer.masked_lm,
      pretrainer.sentence_order,
  ):
    config = layer.get_config()
    if layer is pretrainer.masked_lm:
      config["embedding_table"] = encoder.embedding_table
    assert type(layer).from_config(config).get_config() == layer.get_config()
  assert AlbertEncoder.from_config_object(
      AlbertConfig(**TINY)
  ).config == AlbertConfig(**TINY)


def test_attention_block_alone_matches_numpy():
  from albert.modeling.attention import AttentionBlock

  block = AttentionBlock(hidden_size=12, num_heads=3)
  rng = np.random.default_rng(3)
  x = rng.normal(size=(2, 5, 12)).astype(np.float32)
  mask = np.array([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0]])
  got = block(tf.constant(x), tf.constant(mask)).numpy()
  want = ref.attention_block(
      x.astype(np.float64), mask.astype(np.float64), block, num_heads=3
  )
  np.testing.assert_allclose(got, want, atol=1e-5)
  # The hand-computed mask adder: a padded key gets weight exp(-10000) ~ 0.
  one_hot_mask = np.array([[1, 0, 0, 0, 0]] * 2)
  got = block(tf.constant(x), tf.constant(one_hot_mask)).numpy()
  # Attending to key 0 only: context = value(x_0) for every query.
  value0 = ref.dense(x[:, :1].astype(np.float64), block.value)
  out = ref.dense(np.repeat(value0, 5, axis=1), block.output_dense)
  np.testing.assert_allclose(got, ref.ln(x + out, block.layer_norm), atol=1e-5)


def _sequence_output(encoder):
  return lambda inputs: encoder(inputs)["sequence_output"]


def test_a_dynamic_length_reads_the_shape_once_per_call():
  # With [None, None] inputs every reshape needs the running length; the
  # encoder reads it once per call and its L layers reuse it, so the graph's
  # shape bookkeeping does not grow with L, and the values are the eager
  # (static-shape) ones.
  spec = tf.TensorSpec([None, None], tf.int32)
  signature = [{k: spec for k in _as_tf(*_inputs())}]
  inputs = _as_tf(*_inputs())
  shape_ops = {}
  for layers in (2, 5):
    encoder = AlbertEncoder(**{**TINY, "num_layers": layers})
    eager = encoder(inputs)
    call = tf.function(
        _sequence_output(encoder), input_signature=signature, autograph=False
    ).get_concrete_function()
    np.testing.assert_allclose(
        call(inputs).numpy(), eager["sequence_output"].numpy(), atol=1e-6
    )
    ops = [op.type for op in call.graph.get_operations()]
    shape_ops[layers] = sum(t in ("Shape", "Pack", "ConcatV2") for t in ops)
  assert shape_ops[2] == shape_ops[5], shape_ops
