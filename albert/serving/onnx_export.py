"""ONNX export: the token-id encoder and fine-tuned classifiers, for
onnxruntime.

The graph is written from the model's weights with the ONNX operators the
model is made of, op for op as `AlbertEncoder` computes (float32, inference:
no dropout): Gather embeddings, LayerNormalization (opset 17), MatMul
attention with the additive key mask, the activation's own formula, the
tanh pooler. A weight shared across layers is one initializer used by every
layer, so the file is as small as the checkpoint (the paper's point);
exporters that trace the TensorFlow graph (tf2onnx) give a graph of shape
plumbing around the same numbers. onnxruntime fuses the standard patterns
(LayerNorm, GELU, attention) itself.

  inputs   input_word_ids, input_mask, input_type_ids: int32 [batch, seq]
  outputs  encoder: sequence_output [batch, seq, H], pooled_output [batch, H]
           sequence classifier / regressor: logits [batch, K]
           token classifier: logits [batch, seq, K]

The `onnx` package is an optional dependency (`pip install 'albert-tf2[onnx]'`);
it is imported when an export runs.
"""

import logging as py_logging
import math
import os
import tempfile
from typing import Dict, List, Optional

import numpy as np

from albert.modeling import weight_names
from albert.modeling.attention import MASK_ADDER
from albert.modeling.encoder import AlbertEncoder
from official.errors import InputError
from official.io import atomic_write

OPSET = 17  # LayerNormalization
INPUTS = ("input_word_ids", "input_mask", "input_type_ids")
# Fine-tuned heads with an ONNX form: a dense layer on one encoder output.
HEAD_KINDS = ("sequence_classification", "token_classification")
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _onnx():
  try:
    import onnx  # pylint: disable=import-outside-toplevel

    return onnx
  except ImportError:
    raise InputError(
        "ONNX export needs the onnx package: pip install 'albert-tf2[onnx]' "
        "(or pip install onnx)"
    ) from None


class _Graph:
  """Nodes and initializers, named in order."""

  def __init__(self, onnx):
    self.onnx = onnx
    self.nodes: List = []
    self.initializers: Dict[str, object] = {}
    self._count = 0

  def const(self, name: str, array) -> str:
    if name not in self.initializers:
      self.initializers[name] = self.onnx.numpy_helper.from_array(
          np.asarray(array), name
      )
    return name

  def op(self, op_type: str, *inputs: str, **attributes) -> str:
    self._count += 1
    output = f"{op_type.lower()}_{self._count}"
    self.nodes.append(
        self.onnx.helper.make_node(
            op_type, list(inputs), [output], **attributes
        )
    )
    return output

  def dense(self, x: str, prefix: str, weights) -> str:
    kernel = self.const(f"{prefix}/kernel", weights[f"{prefix}/kernel"])
    bias = self.const(f"{prefix}/bias", weights[f"{prefix}/bias"])
    return self.op("Add", self.op("MatMul", x, kernel), bias)

  def layer_norm(self, x: str, prefix: str, weights, epsilon: float) -> str:
    gamma = self.const(f"{prefix}/gamma", weights[f"{prefix}/gamma"])
    beta = self.const(f"{prefix}/beta", weights[f"{prefix}/beta"])
    return self.op(
        "LayerNormalization", x, gamma, beta, axis=-1, epsilon=epsilon
    )

  def scalar(self, value: float) -> str:
    return self.const(f"scalar/{value!r}", np.asarray(value, np.float32))


def _activation(g: _Graph, x: str, name: str) -> str:
  """`official.modeling.activations`, formula for formula."""
  if name in ("gelu", "gelu_new"):  # 0.5 x (1 + tanh(c (x + k x^3)))
    cube = g.op("Mul", g.op("Mul", x, x), x)
    inner = g.op("Add", x, g.op("Mul", g.scalar(0.044715), cube))
    t = g.op("Tanh", g.op("Mul", g.scalar(_SQRT_2_OVER_PI), inner))
    half = g.op("Mul", g.scalar(0.5), x)
    return g.op("Mul", half, g.op("Add", g.scalar(1.0), t))
  if name == "gelu_exact":  # 0.5 x (1 + erf(x / sqrt 2))
    erf = g.op("Erf", g.op("Mul", x, g.scalar(1.0 / math.sqrt(2.0))))
    return g.op(
        "Mul", g.op("Mul", g.scalar(0.5), x), g.op("Add", g.scalar(1.0), erf)
    )
  if name == "relu":
    return g.op("Relu", x)
  if name == "tanh":
    return g.op("Tanh", x)
  if name == "swish":
    return g.op("Mul", x, g.op("Sigmoid", x))
  raise InputError(f"hidden_act={name!r} has no ONNX form here")


def _attention(g: _Graph, x: str, adder: str, index: int, c, weights) -> str:
  """`AttentionBlock` of weight set `index`: post-LN multi-head
  self-attention, keys outside the mask pushed down by `adder`."""
  n = c.num_heads
  d = c.hidden_size // n
  split = g.const("split_heads", np.array([0, 0, n, d], np.int64))
  merge = g.const("merge_heads", np.array([0, 0, c.hidden_size], np.int64))
  name = weight_names.attention_weight

  def heads(weight, perm):
    y = g.dense(x, name(index, weight), weights)  # [B, T, H]
    return g.op("Transpose", g.op("Reshape", y, split), perm=perm)

  q = heads("query", [0, 2, 1, 3])  # [B, N, T, D]
  k = heads("key", [0, 2, 3, 1])  # [B, N, D, T]
  v = heads("value", [0, 2, 1, 3])
  scores = g.op("Div", g.op("MatMul", q, k), g.scalar(math.sqrt(d)))
  probs = g.op("Softmax", g.op("Add", scores, adder), axis=-1)  # [B, N, T, T]
  context = g.op("Transpose", g.op("MatMul", probs, v), perm=[0, 2, 1, 3])
  context = g.op("Reshape", context, merge)  # [B, T, N, D] -> [B, T, H]
  out = g.dense(context, name(index, "output_dense"), weights)
  return g.layer_norm(
      g.op("Add", x, out),
      name(index, "layer_norm"),
      weights,
      c.layer_norm_epsilon,
  )


def _feed_forward(g: _Graph, x: str, index: int, c, weights) -> str:
  """`FeedForwardBlock` of weight set `index`."""
  name = weight_names.ffn_weight
  inner = _activation(
      g, g.dense(x, name(index, "intermediate"), weights), c.hidden_act
  )  # [B, T, FFN]
  out = g.dense(inner, name(index, "output_dense"), weights)  # [B, T, H]
  return g.layer_norm(
      g.op("Add", x, out),
      name(index, "layer_norm"),
      weights,
      c.layer_norm_epsilon,
  )


def _encoder(g: _Graph, encoder: AlbertEncoder, weights):
  """(sequence_output, pooled_output) of the encoder on the graph inputs."""
  c = encoder.config
  eps = c.layer_norm_epsilon
  e = weight_names.EMBEDDINGS
  words = g.op(
      "Gather",
      g.const(f"{e}/word_embeddings", weights[f"{e}/word_embeddings"]),
      "input_word_ids",
  )  # [B, T] -> [B, T, E]
  types = g.op(
      "Gather",
      g.const(f"{e}/type_embeddings", weights[f"{e}/type_embeddings"]),
      "input_type_ids",
  )
  length = g.op(
      "Slice",
      g.op("Shape", "input_word_ids"),
      g.const("one", np.array([1], np.int64)),
      g.const("two", np.array([2], np.int64)),
  )  # [T]
  positions = g.op(
      "Slice",
      g.const(f"{e}/position_embeddings", weights[f"{e}/position_embeddings"]),
      g.const("zero", np.array([0], np.int64)),
      length,
      g.const("zero", np.array([0], np.int64)),
  )  # [T, E]
  x = g.op("Add", g.op("Add", words, types), positions)
  x = g.layer_norm(x, f"{e}/layer_norm", weights, eps)
  if encoder.embeddings.embedding_projection is not None:
    x = g.dense(x, f"{e}/embedding_projection", weights)  # [B, T, H]
  # Keys outside the mask get MASK_ADDER added to their scores.
  keep = g.op("Cast", "input_mask", to=g.onnx.TensorProto.FLOAT)
  adder = g.op("Mul", g.op("Sub", g.scalar(1.0), keep), g.scalar(MASK_ADDER))
  adder = g.op(
      "Unsqueeze", adder, g.const("axes_1_2", np.array([1, 2], np.int64))
  )
  stack = encoder.transformer
  for layer in range(c.num_layers):
    for inner in range(c.inner_group_num):
      a, f = stack.weight_indices(layer, inner)
      x = _attention(g, x, adder, a, c, weights)  # [B, T, H]
      x = _feed_forward(g, x, f, c, weights)
  first = g.op(
      "Gather", x, g.const("first", np.asarray(0, np.int64)), axis=1
  )  # [B, T, H] -> [B, H]
  pooled = g.op("Tanh", g.dense(first, weight_names.POOLER, weights))
  return x, pooled


def _pool(g: _Graph, x: str, pooling: str, normalize: bool) -> str:
  """`albert.modeling.pooling.pool` in ONNX ops: [B, T, H] -> [B, H]."""
  mask = g.op(
      "Unsqueeze",
      g.op("Cast", "input_mask", to=g.onnx.TensorProto.FLOAT),
      g.const("axes_2", np.array([2], np.int64)),
  )  # [B, T, 1]
  axis_1 = g.const("axes_1", np.array([1], np.int64))
  if pooling == "cls":
    pooled = g.op(
        "Gather", x, g.const("first", np.asarray(0, np.int64)), axis=1
    )
  elif pooling == "max":
    masked = g.op(
        "Where", g.op("Greater", mask, g.scalar(0.0)), x, g.scalar(-1e9)
    )
    pooled = g.op("ReduceMax", masked, axes=[1], keepdims=0)
  else:
    summed = g.op("ReduceSum", g.op("Mul", x, mask), axis_1, keepdims=0)
    count = g.op(
        "Max", g.op("ReduceSum", mask, axis_1, keepdims=0), g.scalar(1e-9)
    )
    if pooling == "mean_sqrt_len":
      count = g.op("Sqrt", count)
    pooled = g.op("Div", summed, count)
  if normalize:
    squares = g.op(
        "ReduceSum",
        g.op("Mul", pooled, pooled),
        g.const("axes_last", np.array([-1], np.int64)),
        keepdims=1,
    )
    pooled = g.op(
        "Div", pooled, g.op("Max", g.op("Sqrt", squares), g.scalar(1e-12))
    )
  return pooled


def build(model, embedding: Optional[Dict] = None):
  """The ONNX model of an `AlbertEncoder` or a fine-tuned classifier; an
  encoder (or a model with one) with `embedding` settings
  (`model_dir.read_embedding`) also outputs `embedding` [batch, H], pooled
  and normalised as they say.

  Raises:
    InputError: a head without an ONNX form here, or a model not computing
      in float32.
  """
  onnx = _onnx()
  encoder = model if isinstance(model, AlbertEncoder) else model.encoder
  if embedding is not None:
    model = encoder  # an embedder's head is the pooling the settings say
  kind = None if model is encoder else getattr(model, "head_kind", None)
  if model is not encoder and kind not in HEAD_KINDS:
    raise InputError(
        f"the {kind} head has no ONNX export (only {', '.join(HEAD_KINDS)} "
        "and the encoder); export a SavedModel instead"
    )
  if encoder.compute_dtype != "float32":
    raise InputError(
        f"the model computes in {encoder.compute_dtype}; ONNX export is "
        "float32 (load it without --precision)"
    )
  weights = {
      name: v.numpy()
      for name, v in weight_names.encoder_weights(encoder).items()
  }
  if kind is not None:
    weights["classifier/kernel"] = model.classifier.kernel.numpy()
    weights["classifier/bias"] = model.classifier.bias.numpy()
  g = _Graph(onnx)
  sequence, pooled = _encoder(g, encoder, weights)
  dims = ["batch", "sequence"]
  outputs = []
  if kind is None:
    named = {
        "sequence_output": (sequence, dims + [encoder.config.hidden_size]),
        "pooled_output": (pooled, ["batch", encoder.config.hidden_size]),
    }
    if embedding is not None:
      vectors = _pool(g, sequence, embedding["pooling"], embedding["normalize"])
      named["embedding"] = (vectors, ["batch", encoder.config.hidden_size])
  else:
    source = pooled if model.encoder_output == "pooled_output" else sequence
    k = int(model.num_classes)
    shape = ["batch", k] if kind == "sequence_classification" else dims + [k]
    named = {"logits": (g.dense(source, "classifier", weights), shape)}
  for name, (tensor, shape) in named.items():
    g.nodes.append(onnx.helper.make_node("Identity", [tensor], [name]))
    outputs.append(
        onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, shape)
    )
  inputs = [
      onnx.helper.make_tensor_value_info(name, onnx.TensorProto.INT32, dims)
      for name in INPUTS
  ]
  graph = onnx.helper.make_graph(
      g.nodes, "albert", inputs, outputs, list(g.initializers.values())
  )
  proto = onnx.helper.make_model(
      graph,
      opset_imports=[onnx.helper.make_opsetid("", OPSET)],
      producer_name="albert-tf2",
  )
  onnx.checker.check_model(proto)
  return proto


def quantize_int8(proto):
  """`proto` with its matrix products quantised to int8, dynamically
  (onnxruntime's `quantize_dynamic`: int8 weights, one scale per output
  column; each activation quantised to uint8 per call). A weight shared
  across layers is one initializer, so it is quantised once and every layer
  uses the same int8 copy. Embedding tables, LayerNorm and softmax stay
  float32. Needs onnxruntime (the [onnx] extra)."""
  try:
    # pylint: disable-next=import-outside-toplevel
    from onnxruntime import quantization
  except ImportError:
    raise InputError(
        "--quantize=int8 needs onnxruntime: pip install 'albert-tf2[onnx]' "
        "(or pip install onnxruntime)"
    ) from None
  onnx = _onnx()
  # The quantiser logs a line per tensor at INFO, through the root logger.
  root = py_logging.getLogger()
  level = root.level
  root.setLevel(max(level, py_logging.WARNING))
  # local-only: the quantiser's scratch file, removed after.
  with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "int8.onnx")
    try:
      quantization.quantize_dynamic(
          proto,
          out,
          op_types_to_quantize=["MatMul"],
          per_channel=True,
          weight_type=quantization.QuantType.QInt8,
      )
    finally:
      root.setLevel(level)
    return onnx.load(out)


QUANTIZE = ("none", "int8")


def check_quantize(quantize: str, onnx: bool, format_flag: str) -> None:
  """Refuses `quantize` for an export that is not ONNX (`format_flag`: the
  command's flag that chooses ONNX), before any work."""
  if quantize != "none" and not onnx:
    raise InputError(
        f"--quantize={quantize} applies to {format_flag}=onnx (a "
        "SavedModel's int8 form is TFLite's: albert.export_tflite "
        "--precision=dynamic_int8)"
    )


def write(
    model, path: str, embedding: Optional[Dict] = None, quantize: str = "none"
) -> str:
  """Writes the ONNX model of `model` to `path` (atomically);
  `quantize="int8"`: its matrix products in int8 (`quantize_int8`)."""
  if quantize not in QUANTIZE:
    raise InputError(f"quantize={quantize!r} is not one of {QUANTIZE}")
  proto = build(model, embedding)
  if quantize == "int8":
    proto = quantize_int8(proto)
  with atomic_write.atomic_file(path, "wb") as f:
    f.write(proto.SerializeToString())
  return path
