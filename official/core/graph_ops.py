"""Which ops and attributes a graph uses, checked against another TensorFlow's.

A SavedModel runs where every op it uses is registered, with a kernel for the
device, and with no attribute the op's registered definition lacks: a server
built from an older TensorFlow (TF Serving embeds one, with TF-Text) refuses
the model otherwise, at load or at the first request. `record` lists what a
TensorFlow build knows (run it there); `unknown` compares a graph's ops with
such a record, one line per problem.

A function marked for XLA (`tf.function(jit_compile=True)`, the
`_XlaMustCompile` attribute) is also reported: it needs XLA's CPU JIT, which
TF Serving enables only with `--xla_cpu_compilation_enabled=true`.
"""

import json
from typing import Dict, Iterable, List, Set

from official.io import files

XLA_ATTRIBUTE = "_XlaMustCompile"
# Ops the runtime executes itself, without a kernel registered for them.
_RUNTIME_OPS = frozenset({"_Arg", "_Retval"})


def graph_ops(graph_def) -> Dict[str, Set[str]]:
  """{op name: attribute names used} over a GraphDef's nodes and its
  function library (calls of library functions excluded; attributes whose
  names start with "_" are the runtime's, not the op's, and are kept only
  for `XLA_ATTRIBUTE`)."""
  functions = {f.signature.name for f in graph_def.library.function}
  used: Dict[str, Set[str]] = {}

  def visit(nodes: Iterable) -> None:
    for node in nodes:
      if node.op in functions:
        continue
      attrs = used.setdefault(node.op, set())
      for name, value in node.attr.items():
        if not name.startswith("_"):
          attrs.add(name)
        elif name == XLA_ATTRIBUTE and value.b:
          attrs.add(name)

  visit(graph_def.node)
  for function in graph_def.library.function:
    visit(function.node_def)
  return used


def saved_model_ops(path: str) -> Dict[str, Set[str]]:
  """`graph_ops` of every meta graph of the SavedModel at `path`."""
  # pylint: disable-next=import-outside-toplevel
  from tensorflow.core.protobuf import saved_model_pb2

  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  proto = saved_model_pb2.SavedModel()
  proto.ParseFromString(
      tf.io.gfile.GFile(f"{path}/saved_model.pb", "rb").read()
  )
  used: Dict[str, Set[str]] = {}
  for meta_graph in proto.meta_graphs:
    for op, attrs in graph_ops(meta_graph.graph_def).items():
      used.setdefault(op, set()).update(attrs)
  return used


def record() -> Dict:
  """What this process's TensorFlow knows: every registered op with its
  attribute names, and the ops with a kernel for the CPU (its own or one
  registered for every device). Import the op libraries
  (tensorflow_text) first."""
  # pylint: disable=import-outside-toplevel
  import tensorflow as tf
  from tensorflow.core.framework import op_def_pb2
  from tensorflow.python.client import pywrap_tf_session
  from tensorflow.python.framework import kernels

  # pylint: enable=import-outside-toplevel
  ops = op_def_pb2.OpList()
  buffer = pywrap_tf_session.TF_GetAllOpList()
  try:
    ops.ParseFromString(pywrap_tf_session.TF_GetBuffer(buffer))
  finally:
    pywrap_tf_session.TF_DeleteBuffer(buffer)
  cpu = {
      k.op
      for k in kernels.get_all_registered_kernels().kernel
      if k.device_type in ("CPU", "DEFAULT")  # DEFAULT: any device's
  }
  return {
      "tensorflow": tf.__version__,
      "ops": {
          op.name: sorted(a.name for a in op.attr)
          for op in sorted(ops.op, key=lambda o: o.name)
      },
      "cpu_kernels": sorted(cpu),
  }


def read_record(path: str) -> Dict:
  """A `record` written as JSON (any TensorFlow file system)."""
  return json.loads(files.read_text(path, "the op record"))


def unknown(
    used: Dict[str, Set[str]], known: Dict, where: str = "TensorFlow"
) -> List[str]:
  """One line per op of `used` that `known` (a `record`) lacks, per
  attribute its op's definition there lacks, per op without a CPU kernel
  there, and for XLA-compiled functions; [] when the graph runs there."""
  ops, cpu = known["ops"], set(known["cpu_kernels"])
  lines = []
  for op in sorted(used):
    if op not in ops:
      lines.append(f"op {op}: not registered in {where}")
      continue
    if op not in cpu and op not in _RUNTIME_OPS:
      lines.append(f"op {op}: no CPU kernel in {where}")
    for attr in sorted(used[op] - set(ops[op]) - {XLA_ATTRIBUTE}):
      lines.append(f"op {op}: attribute {attr} unknown to {where}")
    if XLA_ATTRIBUTE in used[op]:
      lines.append(
          f"op {op}: calls a function compiled with XLA (needs XLA's CPU "
          "JIT: TF Serving's --xla_cpu_compilation_enabled=true)"
      )
  return lines
