"""MaskedLMHead: the tied output product and its gradient stay 2-D."""

import numpy as np
import tensorflow as tf

from albert.modeling.masked_lm_head import MaskedLMHead

B, T, P, H, V, E = 3, 7, 2, 16, 50, 8


def _head():
  table = tf.Variable(
      np.random.default_rng(0).normal(size=(V, E)).astype(np.float32),
      name="word_embeddings",
  )
  return table, MaskedLMHead(embedding_table=table, activation="gelu")


def test_logits_match_numpy():
  table, head = _head()
  rng = np.random.default_rng(1)
  seq = rng.normal(size=(B, T, H)).astype(np.float32)
  positions = np.array([[1, 3], [0, 6], [2, 2]], np.int32)
  logits = head(tf.constant(seq), tf.constant(positions)).numpy()
  assert logits.shape == (B, P, V)
  head.output_bias.assign(rng.normal(size=V).astype(np.float32))
  logits = head(tf.constant(seq), tf.constant(positions)).numpy()
  gathered = np.take_along_axis(seq, positions[..., None], axis=1)  # [B, P, H]
  x = head.layer_norm(head.dense(tf.constant(gathered))).numpy()  # [B, P, E]
  expected = x @ table.numpy().T + head.output_bias.numpy()
  np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)


def test_table_gradient_never_materialises_batch_by_vocab():
  table, head = _head()
  seq = tf.random.normal([B, T, H])
  positions = tf.constant([[1, 3], [0, 6], [2, 2]])

  @tf.function
  def grads():
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(tf.square(head(seq, positions)))
    return tape.gradient(loss, table)

  graph = grads.get_concrete_function().graph
  shapes = {
      tuple(t.shape.as_list())
      for op in graph.get_operations()
      for t in op.outputs
      if t.shape.rank is not None
  }
  # A batched product against the broadcast table would create [B, V, E]
  # (and reduce it over B) in its gradient.
  assert (B, V, E) not in shapes
  grad = tf.convert_to_tensor(grads())
  assert grad.shape == (V, E) and np.all(np.isfinite(grad.numpy()))
