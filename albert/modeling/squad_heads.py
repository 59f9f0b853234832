"""SQuAD span heads and their losses.

`SpanHead` is BERT's v1.1 head (Devlin et al., 2019, section 4.2): one dense
layer gives a start and an end logit per token. `ConditionalSpanHead` is the
v2.0 head of the original ALBERT `squad_utils.create_v2_model`, taken from
XLNet (Yang et al., 2019, appendix A.3 / its `squad_utils`): start logits;
end logits conditioned on a start (its hidden state concatenated to every
position -> Dense(H, tanh) -> LayerNorm -> Dense(1)); at inference a beam of
the top `start_n_top` starts times the top `end_n_top` ends per start; and an
answerability logit from [CLS] and the start-probability-weighted hidden state.

Both heads only let a span start or end on a context token or on [CLS]
(position 0, the label of windows without an answer): other logits are set to
`NEG_INF`. Losses are plain per-example functions (docs/reference.md section 6):
v1.1 (start CE + end CE) / 2; v2.0 adds 0.5 * answerability sigmoid CE.
"""

from typing import Dict, Optional

import tensorflow as tf
import tf_keras
from official.modeling.no_autograph import no_autograph

NEG_INF = -1e30  # The original's mask value (float32 logits).


def candidate_mask(paragraph_mask: tf.Tensor) -> tf.Tensor:
  """bool [B, T]: context tokens and [CLS] may start or end a span."""
  mask = tf.cast(paragraph_mask, tf.bool)
  is_cls = tf.equal(tf.range(tf.shape(mask)[1]), 0)[tf.newaxis, :]  # [1, T]
  return mask | is_cls


def mask_logits(logits: tf.Tensor, allowed: tf.Tensor) -> tf.Tensor:
  """float32 logits with NEG_INF where `allowed` is False (broadcasts)."""
  logits = tf.cast(logits, tf.float32)
  return tf.where(allowed, logits, tf.constant(NEG_INF, tf.float32))


def _dense(units, initializer_range, name, **kwargs):
  return tf_keras.layers.Dense(
      units,
      kernel_initializer=tf_keras.initializers.TruncatedNormal(
          stddev=initializer_range
      ),
      name=name,
      **kwargs,
  )


class SpanHead(tf_keras.layers.Layer):
  """v1.1: start and end logits from one Dense(2) on the sequence output.

  As the original `create_v1_model` (the default), the logits are not
  masked: the loss's softmax runs over every position. `mask_context=True`
  masks them to the context and [CLS], as the v2.0 head does
  (docs/experiments.md, "SQuAD v1.1 context mask", measures both). Decoding
  only ever picks context spans, so the mask changes training, not what can
  be answered.

  Args:
    initializer_range: stddev of the truncated-normal initialiser.
    mask_context: mask the logits of question, [SEP] and padding positions.

  Call args:
    sequence_output: [B, T, H].
    paragraph_mask: [B, T], 1 on context tokens.

  Returns:
    dict of float32 [B, T] `start_logits`, `end_logits`.
  """

  def __init__(
      self,
      *,
      initializer_range: float = 0.02,
      mask_context: bool = False,
      **kwargs,
  ):
    super().__init__(**kwargs)
    self.initializer_range = initializer_range
    self.mask_context = mask_context
    self.dense = _dense(2, initializer_range, "dense")

  @no_autograph
  def call(self, sequence_output, paragraph_mask):
    logits = self.dense(sequence_output)  # [B, T, H] -> [B, T, 2]
    start, end = logits[..., 0], logits[..., 1]  # [B, T] each
    if self.mask_context:
      allowed = candidate_mask(paragraph_mask)
      start, end = mask_logits(start, allowed), mask_logits(end, allowed)
    return {"start_logits": start, "end_logits": end}

  def get_config(self):
    config = super().get_config()
    config.update(
        {
            "initializer_range": self.initializer_range,
            "mask_context": self.mask_context,
        }
    )
    return config


class ConditionalSpanHead(tf_keras.layers.Layer):
  """v2.0: XLNet-style start / conditioned end / answerability head.

  Args:
    hidden_size: H, width of the end and answerability hidden layers.
    initializer_range: stddev of the truncated-normal initialiser.
    dropout_rate: dropout on the answerability hidden layer.
    layer_norm_epsilon: epsilon of the end LayerNorm.
    start_n_top, end_n_top: beam sizes at inference (5 and 5 originally).

  Call args:
    sequence_output: [B, T, H].
    paragraph_mask: [B, T], 1 on context tokens.
    start_positions: int [B] gold starts (training), or None (inference).

  Returns:
    dict with float32 `start_logits` [B, T] and `cls_logits` [B] (the
    answerability logit, > 0 = unanswerable), and
    - with start_positions: `end_logits` [B, T] given the gold start;
    - without: `start_top_log_probs`, `start_top_index` [B, K1] and
      `end_top_log_probs`, `end_top_index` [B, K1, K2] (log-softmax over T of
      the end logits given each of the K1 best starts).
  """

  def __init__(
      self,
      *,
      hidden_size: int,
      initializer_range: float = 0.02,
      dropout_rate: float = 0.1,
      layer_norm_epsilon: float = 1e-12,
      start_n_top: int = 5,
      end_n_top: int = 5,
      **kwargs,
  ):
    super().__init__(**kwargs)
    if start_n_top < 1 or end_n_top < 1:
      raise ValueError(
          f"start_n_top={start_n_top} and end_n_top={end_n_top} must be >= 1"
      )
    self.hidden_size = hidden_size
    self.initializer_range = initializer_range
    self.dropout_rate = dropout_rate
    self.layer_norm_epsilon = layer_norm_epsilon
    self.start_n_top = start_n_top
    self.end_n_top = end_n_top
    r = initializer_range
    self.start_dense = _dense(1, r, "start_dense")
    self.end_dense_0 = _dense(hidden_size, r, "end_dense_0", activation="tanh")
    self.end_layer_norm = tf_keras.layers.LayerNormalization(
        epsilon=layer_norm_epsilon, name="end_layer_norm"
    )
    self.end_dense_1 = _dense(1, r, "end_dense_1")
    self.answer_dense_0 = _dense(
        hidden_size, r, "answer_dense_0", activation="tanh"
    )
    self.answer_dropout = tf_keras.layers.Dropout(
        dropout_rate, name="answer_dropout"
    )
    self.answer_dense_1 = _dense(1, r, "answer_dense_1", use_bias=False)

  def end_logits_given(self, sequence_output, start_index, allowed):
    """Masked end logits [B, K, T] for int start positions [B, K]."""
    x = sequence_output
    shape = tf.shape(x)
    k = tf.shape(start_index)[1]
    start_h = tf.gather(x, start_index, batch_dims=1)  # [B, K, H]
    target = [shape[0], k, shape[1], shape[2]]
    pairs = tf.concat(
        [
            tf.broadcast_to(x[:, tf.newaxis], target),
            tf.broadcast_to(start_h[:, :, tf.newaxis], target),
        ],
        axis=-1,
    )  # [B, K, T, 2H]
    h = self.end_layer_norm(self.end_dense_0(pairs))  # [B, K, T, H]
    logits = tf.squeeze(self.end_dense_1(h), -1)  # [B, K, T]
    return mask_logits(logits, allowed[:, tf.newaxis])

  @no_autograph
  def call(
      self,
      sequence_output,
      paragraph_mask,
      start_positions: Optional[tf.Tensor] = None,
      training=None,
  ) -> Dict[str, tf.Tensor]:
    x = sequence_output
    allowed = candidate_mask(paragraph_mask)  # [B, T]
    start_logits = mask_logits(tf.squeeze(self.start_dense(x), -1), allowed)
    outputs = {"start_logits": start_logits}
    if start_positions is not None:
      starts = tf.cast(tf.reshape(start_positions, [-1, 1]), tf.int32)
      outputs["end_logits"] = self.end_logits_given(x, starts, allowed)[:, 0]
    else:
      start_top_log_probs, start_top_index = tf.math.top_k(
          tf.nn.log_softmax(start_logits), k=self.start_n_top
      )  # [B, K1]
      end_log_probs = tf.nn.log_softmax(
          self.end_logits_given(x, start_top_index, allowed)
      )  # [B, K1, T]
      end_top_log_probs, end_top_index = tf.math.top_k(
          end_log_probs, k=self.end_n_top
      )  # [B, K1, K2]
      outputs.update(
          start_top_log_probs=start_top_log_probs,
          start_top_index=start_top_index,
          end_top_log_probs=end_top_log_probs,
          end_top_index=end_top_index,
      )
    # Answerability: [CLS] and the expected hidden state under the start
    # distribution; no end dependency, so one logit per window.
    start_p = tf.nn.softmax(start_logits)  # [B, T]
    start_feature = tf.einsum("bth,bt->bh", tf.cast(x, tf.float32), start_p)
    features = tf.concat([tf.cast(start_feature, x.dtype), x[:, 0]], -1)
    h = self.answer_dropout(
        self.answer_dense_0(features), training=training  # [B, 2H] -> [B, H]
    )
    outputs["cls_logits"] = tf.cast(
        tf.squeeze(self.answer_dense_1(h), -1), tf.float32
    )  # [B]
    return outputs

  def get_config(self):
    config = super().get_config()
    config.update(
        {
            "hidden_size": self.hidden_size,
            "initializer_range": self.initializer_range,
            "dropout_rate": self.dropout_rate,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "start_n_top": self.start_n_top,
            "end_n_top": self.end_n_top,
        }
    )
    return config


def span_loss(
    start_logits, end_logits, start_positions, end_positions
) -> tf.Tensor:
  """Per-example (start CE + end CE) / 2, float32 [B]."""
  ce = tf.nn.sparse_softmax_cross_entropy_with_logits
  start = ce(
      labels=tf.cast(start_positions, tf.int32),
      logits=tf.cast(start_logits, tf.float32),
  )
  end = ce(
      labels=tf.cast(end_positions, tf.int32),
      logits=tf.cast(end_logits, tf.float32),
  )
  return (start + end) / 2.0


def answerability_loss(cls_logits, is_impossible) -> tf.Tensor:
  """Per-example sigmoid CE of the answerability logit, float32 [B]."""
  return tf.nn.sigmoid_cross_entropy_with_logits(
      labels=tf.cast(is_impossible, tf.float32),
      logits=tf.cast(cls_logits, tf.float32),
  )


def squad_v2_loss(
    start_logits,
    end_logits,
    cls_logits,
    start_positions,
    end_positions,
    is_impossible,
) -> tf.Tensor:
  """Per-example (start + end) / 2 + 0.5 * answerability CE, float32 [B]."""
  return span_loss(
      start_logits, end_logits, start_positions, end_positions
  ) + 0.5 * answerability_loss(cls_logits, is_impossible)
