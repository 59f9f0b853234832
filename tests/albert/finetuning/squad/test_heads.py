"""SQuAD heads and losses against numpy re-implementations of the original."""

import numpy as np
import pytest
import tensorflow as tf

from albert.modeling import squad_heads

B, T, H = 3, 8, 6


def _inputs(seed=0):
  rng = np.random.default_rng(seed)
  x = rng.normal(size=(B, T, H)).astype(np.float32)
  paragraph = np.zeros((B, T), np.int32)
  paragraph[:, 3:7] = 1  # [CLS] q q [SEP] c c c c ... minus the last [SEP]
  paragraph[2, 5:7] = 0
  return x, paragraph


def _log_softmax(z):
  z = z - z.max(-1, keepdims=True)
  return z - np.log(np.exp(z).sum(-1, keepdims=True))


def _layer_norm(h, gamma, beta, eps):
  mean = h.mean(-1, keepdims=True)
  var = ((h - mean) ** 2).mean(-1, keepdims=True)
  return (h - mean) / np.sqrt(var + eps) * gamma + beta


def _np_mask(logits, paragraph):
  allowed = paragraph.astype(bool).copy()
  allowed[..., 0] = True
  return np.where(allowed, logits, -1e30)


def test_span_head_is_a_masked_dense():
  x, paragraph = _inputs()
  head = squad_heads.SpanHead(
      initializer_range=0.5, mask_context=True, name="span"
  )
  out = head(x, paragraph)
  kernel, bias = (w.numpy() for w in head.dense.weights)
  ref = x @ kernel + bias  # [B, T, 2]
  np.testing.assert_allclose(
      out["start_logits"],
      _np_mask(ref[..., 0], paragraph),
      rtol=1e-5,
      atol=1e-6,
  )
  np.testing.assert_allclose(
      out["end_logits"], _np_mask(ref[..., 1], paragraph), rtol=1e-5, atol=1e-6
  )
  assert out["start_logits"][0, 1] == squad_heads.NEG_INF  # A question token.
  assert out["start_logits"][0, 0] > -1e3  # [CLS] stays a candidate.
  clone = squad_heads.SpanHead.from_config(head.get_config())
  assert clone.get_config() == head.get_config()
  assert head.dense.name == "dense"


def _np_conditional(head, x, paragraph, starts):
  """The original `create_v2_model` maths in numpy: end logits [B, K, T]."""
  w0, b0 = (w.numpy() for w in head.end_dense_0.weights)
  gamma, beta = (w.numpy() for w in head.end_layer_norm.weights)
  w1, b1 = (w.numpy() for w in head.end_dense_1.weights)
  start_h = x[np.arange(B)[:, None], starts]  # [B, K, H]
  pairs = np.concatenate(
      [
          np.broadcast_to(x[:, None], (B, starts.shape[1], T, H)),
          np.broadcast_to(start_h[:, :, None], (B, starts.shape[1], T, H)),
      ],
      -1,
  )
  h = _layer_norm(
      np.tanh(pairs @ w0 + b0), gamma, beta, head.layer_norm_epsilon
  )
  return _np_mask((h @ w1 + b1)[..., 0], paragraph[:, None])


def _np_cls(head, x, start_logits):
  p = np.exp(_log_softmax(start_logits))
  feature = np.concatenate([np.einsum("bth,bt->bh", x, p), x[:, 0]], -1)
  w0, b0 = (w.numpy() for w in head.answer_dense_0.weights)
  (w1,) = (w.numpy() for w in head.answer_dense_1.weights)  # No bias.
  return (np.tanh(feature @ w0 + b0) @ w1)[:, 0]


def test_conditional_head_training_path_matches_numpy():
  x, paragraph = _inputs(1)
  head = squad_heads.ConditionalSpanHead(
      hidden_size=H, initializer_range=0.5, name="v2"
  )
  gold = np.array([4, 0, 3], np.int32)
  out = head(x, paragraph, start_positions=gold, training=False)
  ws, bs = (w.numpy() for w in head.start_dense.weights)
  start_ref = _np_mask((x @ ws + bs)[..., 0], paragraph)
  np.testing.assert_allclose(
      out["start_logits"], start_ref, rtol=1e-5, atol=1e-6
  )
  end_ref = _np_conditional(head, x, paragraph, gold[:, None])[:, 0]
  np.testing.assert_allclose(out["end_logits"], end_ref, rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(
      out["cls_logits"], _np_cls(head, x, start_ref), rtol=1e-4, atol=1e-5
  )
  assert out["cls_logits"].shape == (B,)


def test_conditional_head_beam_matches_numpy():
  x, paragraph = _inputs(2)
  head = squad_heads.ConditionalSpanHead(
      hidden_size=H, initializer_range=0.5, start_n_top=2, end_n_top=3
  )
  out = head(x, paragraph)
  start_lp = _log_softmax(out["start_logits"].numpy())
  order = np.argsort(-start_lp, axis=-1)[:, :2]
  np.testing.assert_array_equal(out["start_top_index"], order)
  np.testing.assert_allclose(
      out["start_top_log_probs"],
      np.take_along_axis(start_lp, order, -1),
      rtol=1e-5,
  )
  end_lp = _log_softmax(_np_conditional(head, x, paragraph, order))
  end_order = np.argsort(-end_lp, axis=-1)[..., :3]  # [B, 2, 3]
  np.testing.assert_array_equal(out["end_top_index"], end_order)
  np.testing.assert_allclose(
      out["end_top_log_probs"],
      np.take_along_axis(end_lp, end_order, -1),
      rtol=1e-4,
      atol=1e-5,
  )
  # Only context tokens or [CLS] reach the beam (batch 2 has 2 + [CLS]).
  allowed = {0, 3, 4}
  assert set(out["end_top_index"][2].numpy().ravel()) <= allowed
  clone = squad_heads.ConditionalSpanHead.from_config(head.get_config())
  assert clone.get_config() == head.get_config()
  names = {w.name.split("/")[1] for w in head.weights}
  assert names == {
      "start_dense",
      "end_dense_0",
      "end_layer_norm",
      "end_dense_1",
      "answer_dense_0",
      "answer_dense_1",
  }


def test_losses_by_hand():
  start = np.array([[0.0, 1.0, 2.0], [3.0, -1.0, 0.5]], np.float32)
  end = np.array([[1.0, 1.0, -2.0], [0.0, 0.0, 0.0]], np.float32)
  sp, ep = np.array([2, 0]), np.array([1, 2])
  want = (-_log_softmax(start)[[0, 1], sp] - _log_softmax(end)[[0, 1], ep]) / 2
  got = squad_heads.span_loss(start, end, sp, ep)
  np.testing.assert_allclose(got, want, rtol=1e-6)
  # Second example: end CE over three equal logits is ln 3.
  assert got.numpy()[1] == pytest.approx(
      (np.log(np.exp(3) + np.exp(-1) + np.exp(0.5)) - 3 + np.log(3)) / 2,
      rel=1e-6,
  )
  cls, impossible = np.array([2.0, -1.0], np.float32), np.array([1, 0])
  ans = np.array([np.log1p(np.exp(-2.0)), np.log1p(np.exp(-1.0))])
  np.testing.assert_allclose(
      squad_heads.answerability_loss(cls, impossible), ans, rtol=1e-6
  )
  np.testing.assert_allclose(
      squad_heads.squad_v2_loss(start, end, cls, sp, ep, impossible),
      want + 0.5 * ans,
      rtol=1e-6,
  )


def test_masked_logits_train_only_on_candidates():
  logits = squad_heads.mask_logits(
      tf.zeros([1, 4]), squad_heads.candidate_mask(tf.constant([[0, 0, 1, 0]]))
  )
  np.testing.assert_allclose(tf.nn.softmax(logits), [[0.5, 0, 0.5, 0]])


def test_span_head_without_the_context_mask_is_the_originals_plain_dense():
  x, paragraph = _inputs()
  head = squad_heads.SpanHead(initializer_range=0.5, name="span")
  out = head(x, paragraph)
  kernel, bias = (w.numpy() for w in head.dense.weights)
  ref = x @ kernel + bias  # [B, T, 2]: every position keeps its logit
  np.testing.assert_allclose(
      out["start_logits"], ref[..., 0], rtol=1e-5, atol=1e-6
  )
  np.testing.assert_allclose(
      out["end_logits"], ref[..., 1], rtol=1e-5, atol=1e-6
  )
  config = head.get_config()
  assert config["mask_context"] is False
  assert squad_heads.SpanHead.from_config(config).get_config() == config
