"""Original (TF1) ALBERT checkpoints for tests, and their numpy forward pass.

Written from docs/reference.md sections 2-3 and the original code's structure,
not from `albert.checkpoint_conversion`: the variable names are spelled out here
again, the checkpoint is written by a `tf.compat.v1.train.Saver` (as the
original does) and the forward pass reads the original arrays by their original
names. A conversion that puts any tensor in the wrong place makes the converted
model disagree with `forward`.
"""

import numpy as np
import tensorflow as tf

from tests.albert.modeling import numpy_reference as ref

SLOT_SUFFIXES = ("adam_m", "adam_v")


def original_config(**overrides):
  """A tiny albert_config.json dict (original key names)."""
  config = {
      "vocab_size": 50,
      "embedding_size": 8,
      "hidden_size": 16,
      "num_hidden_layers": 3,
      "num_hidden_groups": 1,
      "inner_group_num": 1,
      "num_attention_heads": 4,
      "intermediate_size": 32,
      "hidden_act": "gelu",
      "hidden_dropout_prob": 0.0,
      "attention_probs_dropout_prob": 0.0,
      "max_position_embeddings": 16,
      "type_vocab_size": 2,
      "initializer_range": 0.02,
      "down_scale_factor": 1,
      # Unused keys of the released files, which a loader must accept.
      "net_structure_type": 0,
      "gap_size": 0,
      "num_memory_blocks": 0,
  }
  config.update(overrides)
  return config


def variable_shapes(c):
  """Original variable name -> shape, for config dict `c`."""
  v, e, h, f = (
      c["vocab_size"],
      c["embedding_size"],
      c["hidden_size"],
      c["intermediate_size"],
  )
  shapes = {
      "bert/embeddings/word_embeddings": [v, e],
      "bert/embeddings/token_type_embeddings": [c["type_vocab_size"], e],
      "bert/embeddings/position_embeddings": [c["max_position_embeddings"], e],
      "bert/embeddings/LayerNorm/beta": [e],
      "bert/embeddings/LayerNorm/gamma": [e],
      "bert/pooler/dense/kernel": [h, h],
      "bert/pooler/dense/bias": [h],
      "cls/predictions/transform/dense/kernel": [h, e],
      "cls/predictions/transform/dense/bias": [e],
      "cls/predictions/transform/LayerNorm/beta": [e],
      "cls/predictions/transform/LayerNorm/gamma": [e],
      "cls/predictions/output_bias": [v],
      "cls/seq_relationship/output_weights": [2, h],
      "cls/seq_relationship/output_bias": [2],
  }
  if e != h:  # modeling.transformer_model: only when the widths differ
    shapes["bert/encoder/embedding_hidden_mapping_in/kernel"] = [e, h]
    shapes["bert/encoder/embedding_hidden_mapping_in/bias"] = [h]
  for g in range(c["num_hidden_groups"]):
    for k in range(c["inner_group_num"]):
      p = f"bert/encoder/transformer/group_{g}/inner_group_{k}/"
      for part in ("query", "key", "value"):
        shapes[f"{p}attention_1/self/{part}/kernel"] = [h, h]
        shapes[f"{p}attention_1/self/{part}/bias"] = [h]
      shapes[f"{p}attention_1/output/dense/kernel"] = [h, h]
      shapes[f"{p}attention_1/output/dense/bias"] = [h]
      shapes[f"{p}ffn_1/intermediate/dense/kernel"] = [h, f]
      shapes[f"{p}ffn_1/intermediate/dense/bias"] = [f]
      shapes[f"{p}ffn_1/intermediate/output/dense/kernel"] = [f, h]
      shapes[f"{p}ffn_1/intermediate/output/dense/bias"] = [h]
      for norm in ("LayerNorm", "LayerNorm_1"):
        shapes[f"{p}{norm}/beta"] = [h]
        shapes[f"{p}{norm}/gamma"] = [h]
  return shapes


def random_arrays(c, seed=0, *, slots=False, global_step=None):
  """Random float32 values for every original variable (+ slots, step)."""
  rng = np.random.default_rng(seed)
  arrays = {}
  for name, shape in variable_shapes(c).items():
    if name.endswith("gamma"):
      value = 1.0 + 0.2 * rng.normal(size=shape)
    elif "embeddings" in name:
      value = 0.5 * rng.normal(size=shape)
    else:
      value = 0.3 * rng.normal(size=shape)
    arrays[name] = value.astype(np.float32)
  if slots:
    for name in list(arrays):
      shape = arrays[name].shape
      # |m| in [1, 2] with a random sign, v in [1, 2]: far from any fresh
      # optimizer's zeros, so a lost slot shows in the next step.
      sign = np.where(rng.random(size=shape) < 0.5, -1.0, 1.0)
      arrays[f"{name}/adam_m"] = (sign * rng.uniform(1, 2, size=shape)).astype(
          np.float32
      )
      arrays[f"{name}/adam_v"] = rng.uniform(1, 2, size=shape).astype(
          np.float32
      )
  if global_step is not None:
    arrays["global_step"] = np.int64(global_step)
  return arrays


def write_checkpoint(prefix, arrays):
  """Saves `arrays` under their names with a TF1 Saver; returns the prefix."""
  with tf.Graph().as_default():
    variables = {
        name: tf.compat.v1.Variable(value, name=name.replace("/", "_"))
        for name, value in arrays.items()
    }
    saver = tf.compat.v1.train.Saver(variables)
    with tf.compat.v1.Session() as session:
      session.run(tf.compat.v1.global_variables_initializer())
      return saver.save(session, str(prefix), write_meta_graph=False)


def forward(a, c, word_ids, mask, type_ids, positions):
  """(sequence, pooled, MLM logits at `positions`, SOP logits), float64."""
  a = {k: np.asarray(v, np.float64) for k, v in a.items()}
  t = word_ids.shape[1]
  x = (
      a["bert/embeddings/word_embeddings"][word_ids]
      + a["bert/embeddings/token_type_embeddings"][type_ids]
      + a["bert/embeddings/position_embeddings"][:t][None]
  )
  x = ref.layer_norm(
      x,
      a["bert/embeddings/LayerNorm/gamma"],
      a["bert/embeddings/LayerNorm/beta"],
  )
  if "bert/encoder/embedding_hidden_mapping_in/kernel" in a:  # E != H
    x = (
        x @ a["bert/encoder/embedding_hidden_mapping_in/kernel"]
        + a["bert/encoder/embedding_hidden_mapping_in/bias"]
    )
  b, _, h = x.shape
  n = c["num_attention_heads"]
  d = h // n
  adder = (1.0 - mask.astype(np.float64))[:, None, None, :] * -10000.0

  def dense(y, name):
    return y @ a[f"{name}/kernel"] + a[f"{name}/bias"]

  def heads(y):
    return y.reshape(b, t, n, d).transpose(0, 2, 1, 3)

  layers, groups = c["num_hidden_layers"], c["num_hidden_groups"]
  for layer in range(layers):
    group = int(layer / layers * groups)  # the original's group rule
    for inner in range(c["inner_group_num"]):
      p = f"bert/encoder/transformer/group_{group}/inner_group_{inner}/"
      q, k, v = (
          heads(dense(x, f"{p}attention_1/self/{part}"))
          for part in ("query", "key", "value")
      )
      probs = ref.softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + adder)
      context = (probs @ v).transpose(0, 2, 1, 3).reshape(b, t, h)
      x = ref.layer_norm(
          x + dense(context, f"{p}attention_1/output/dense"),
          a[f"{p}LayerNorm/gamma"],
          a[f"{p}LayerNorm/beta"],
      )
      inner_out = ref.gelu(dense(x, f"{p}ffn_1/intermediate/dense"))
      x = ref.layer_norm(
          x + dense(inner_out, f"{p}ffn_1/intermediate/output/dense"),
          a[f"{p}LayerNorm_1/gamma"],
          a[f"{p}LayerNorm_1/beta"],
      )
  pooled = np.tanh(dense(x[:, 0], "bert/pooler/dense"))
  gathered = np.take_along_axis(x, positions[..., None], axis=1)
  transformed = ref.layer_norm(
      ref.gelu(dense(gathered, "cls/predictions/transform/dense")),
      a["cls/predictions/transform/LayerNorm/gamma"],
      a["cls/predictions/transform/LayerNorm/beta"],
  )
  mlm = (
      transformed @ a["bert/embeddings/word_embeddings"].T
      + a["cls/predictions/output_bias"]
  )
  sop = (
      pooled @ a["cls/seq_relationship/output_weights"].T
      + a["cls/seq_relationship/output_bias"]
  )
  return x, pooled, mlm, sop


def inputs(c, batch=3, length=7, seed=1):
  """Random word ids, a padding mask (rows of length 7, 5, 3), segment ids
  and masked positions inside the real tokens."""
  rng = np.random.default_rng(seed)
  word_ids = rng.integers(5, c["vocab_size"], size=(batch, length))
  lengths = np.array([length, length - 2, 3])[:batch]
  mask = (np.arange(length)[None] < lengths[:, None]).astype(np.int64)
  type_ids = ((np.arange(length)[None] >= 2) & (mask == 1)).astype(np.int64)
  positions = np.stack([rng.choice(n, size=2, replace=False) for n in lengths])
  return word_ids, mask, type_ids, positions
