"""An independent numpy forward pass of ALBERT, written from the paper and the
original TF1 code (not from this package), used to check the Keras model.

Weights are read out of the Keras layers as plain arrays; every computation
below is numpy in float64.
"""

import math

import numpy as np


def layer_norm(x, gamma, beta, eps=1e-12):
  mean = x.mean(-1, keepdims=True)
  var = ((x - mean) ** 2).mean(-1, keepdims=True)
  return (x - mean) / np.sqrt(var + eps) * gamma + beta


def gelu(x):
  return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def softmax(x):
  x = x - x.max(-1, keepdims=True)
  e = np.exp(x)
  return e / e.sum(-1, keepdims=True)


def dense(x, layer):
  kernel, bias = (
      w.numpy().astype(np.float64) for w in (layer.kernel, layer.bias)
  )
  return x @ kernel + bias


def ln(x, layer, eps=1e-12):
  return layer_norm(
      x,
      layer.gamma.numpy().astype(np.float64),
      layer.beta.numpy().astype(np.float64),
      eps,
  )


def attention_block(x, mask, block, num_heads):
  b, t, h = x.shape
  d = h // num_heads

  def heads(y):
    return y.reshape(b, t, num_heads, d).transpose(0, 2, 1, 3)

  q, k, v = (heads(dense(x, l)) for l in (block.query, block.key, block.value))
  scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)
  scores = scores + (1.0 - mask[:, None, None, :]) * -10000.0
  context = (softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(b, t, h)
  return ln(x + dense(context, block.output_dense), block.layer_norm)


def ffn_block(x, block):
  inner = gelu(dense(x, block.intermediate))
  return ln(x + dense(inner, block.output_dense), block.layer_norm)


def encoder(model, word_ids, mask, type_ids, mapping):
  """mapping: list over applied blocks of (attention index, ffn index)."""
  emb = model.embeddings
  table = emb.word_embeddings.numpy().astype(np.float64)
  t = word_ids.shape[1]
  x = (
      table[word_ids]
      + emb.type_embeddings.numpy()[type_ids]
      + emb.position_embeddings.numpy()[:t][None]
  )
  x = ln(x, emb.layer_norm)
  if emb.embedding_projection is not None:  # none when E == H
    x = dense(x, emb.embedding_projection)
  mask = mask.astype(np.float64)
  outputs = []
  stack = model.transformer
  for attention_index, ffn_index in mapping:
    x = attention_block(
        x, mask, stack.attention_blocks[attention_index], stack.num_heads
    )
    x = ffn_block(x, stack.ffn_blocks[ffn_index])
    outputs.append(x)
  pooled = np.tanh(dense(x[:, 0], model.pooler))
  return x, pooled, outputs


def masked_lm(head, table, sequence_output, positions):
  gathered = np.take_along_axis(sequence_output, positions[..., None], axis=1)
  x = ln(gelu(dense(gathered, head.dense)), head.layer_norm)
  return x @ table.T.astype(np.float64) + head.output_bias.numpy()


def sentence_order(head, pooled):
  return dense(pooled, head.dense)
