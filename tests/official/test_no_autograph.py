"""official.modeling.no_autograph: a marked `call` is traced as written, Keras
still reads its signature, every layer of albert.modeling is marked, every
`tf.function` of the packages says whether AutoGraph rewrites it, and every
function a tf.data pipeline of the packages maps is traced as written."""

import ast
import importlib
import inspect
import pathlib
import pkgutil

import pytest
import tensorflow as tf
import tf_keras

import albert.modeling
from official.modeling.no_autograph import no_autograph
from tests import helpers


class _PythonIf(tf_keras.layers.Layer):
  """A call that needs AutoGraph: a Python `if` on a tensor."""

  def call(self, x):
    if tf.reduce_sum(x) > 0:
      return x
    return -x


class _MarkedPythonIf(_PythonIf):
  call = no_autograph(_PythonIf.call)


class _TakesTraining(tf_keras.layers.Layer):

  @no_autograph
  def call(self, x, training=None):
    return x + (1.0 if training else 0.0)


class _NoTraining(tf_keras.layers.Layer):

  @no_autograph
  def call(self, x):
    return x * 2.0


def test_a_marked_call_is_not_rewritten():
  x = tf.constant([-1.0, -2.0])
  # Unmarked, AutoGraph turns the `if` into a tf.cond.
  assert tf.function(_PythonIf())(x).numpy().tolist() == [1.0, 2.0]
  # Marked, the `if` meets a symbolic tensor as written.
  with pytest.raises(TypeError, match="tf.Tensor"):
    tf.function(_MarkedPythonIf())(x)
  # Eagerly it is plain Python either way.
  assert _MarkedPythonIf()(x).numpy().tolist() == [1.0, 2.0]


def test_keras_reads_the_marked_signature():
  x = tf.constant([1.0])
  outer = tf_keras.Sequential([_TakesTraining(), _NoTraining()])
  # `training` reaches the call that takes it, and only that one (a call
  # without the argument would fail if Keras passed it).
  assert outer(x, training=True).numpy().tolist() == [4.0]
  assert outer(x, training=False).numpy().tolist() == [2.0]
  assert "training" in inspect.signature(_TakesTraining.call).parameters


def _layer_classes():
  for info in pkgutil.iter_modules(albert.modeling.__path__):
    module = importlib.import_module(f"albert.modeling.{info.name}")
    for _, cls in inspect.getmembers(module, inspect.isclass):
      if (
          issubclass(cls, tf_keras.layers.Layer)
          and cls.__module__ == module.__name__
          and "call" in vars(cls)
      ):
        yield cls


def test_every_albert_layer_call_is_marked():
  classes = list(_layer_classes())
  assert len(classes) >= 15, classes
  unmarked = [
      c.__qualname__
      for c in classes
      if not getattr(vars(c)["call"], "no_autograph", False)
  ]
  assert not unmarked, unmarked


def _function_names(tree):
  """The spellings of `tf.function` in a module: `<alias>.function` for each
  name TensorFlow is imported as, and the names `function` is imported as
  from it."""
  names = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      names.update(
          f"{a.asname or a.name}.function"
          for a in node.names
          if a.name == "tensorflow"
      )
    elif isinstance(node, ast.ImportFrom) and node.module == "tensorflow":
      names.update(
          a.asname or a.name for a in node.names if a.name == "function"
      )
  return names


def test_every_spelling_of_tf_function_is_found():
  tree = ast.parse(
      "import tensorflow\nimport tensorflow as tf\n"
      "from tensorflow import function as fn\nfrom tensorflow import function"
  )
  assert _function_names(tree) == {
      "tensorflow.function",
      "tf.function",
      "fn",
      "function",
  }


def _package_trees():
  """(path relative to the repository, parsed module) of every file of
  albert/, official/ and tools/."""
  root = pathlib.Path(helpers.REPO)
  for package in ("albert", "official", "tools"):
    for path in sorted((root / package).rglob("*.py")):
      tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
      yield str(path.relative_to(root)), tree


def _function_sites():
  """(file:line, the `autograph` argument's source or None) of every
  `tf.function` call or decorator in albert/, official/ and tools/, however
  TensorFlow or `function` was imported."""
  for where, tree in _package_trees():
    spellings = _function_names(tree)
    nodes = list(ast.walk(tree))
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    for node in nodes:
      if isinstance(node, ast.Call):
        target, keywords = node.func, node.keywords
      elif (
          isinstance(node, (ast.Attribute, ast.Name)) and id(node) not in called
      ):
        target, keywords = node, ()  # a bare decorator, or a reference
      else:
        continue
      if ast.unparse(target) not in spellings:
        continue
      chosen = [ast.unparse(k.value) for k in keywords if k.arg == "autograph"]
      yield f"{where}:{node.lineno}", (chosen[0] if chosen else None)


def test_every_tf_function_chooses_autograph():
  # AutoGraph's default rewrite of a function and all it calls costs seconds
  # of every trace (docs/performance.md, "Start-up: AutoGraph"); the
  # package's loops are `tf.while_loop`s, so none needs it.
  sites = dict(_function_sites())
  assert len(sites) >= 30, sites
  unchosen = sorted(s for s, chosen in sites.items() if chosen is None)
  assert not unchosen, unchosen
  rewritten = sorted(s for s, chosen in sites.items() if chosen != "False")
  assert not rewritten, rewritten


# tf.data's transformations that trace a function, and the strategy's
# dataset builder.
_DATASET_CALLS = frozenset(
    {
        "map",
        "flat_map",
        "interleave",
        "filter",
        "distribute_datasets_from_function",
    }
)


def _dataset_function_sites():
  """(file:line, the function argument's source) of every call of a
  `_DATASET_CALLS` method in albert/, official/ and tools/."""
  for where, tree in _package_trees():
    for node in ast.walk(tree):
      if (
          isinstance(node, ast.Call)
          and isinstance(node.func, ast.Attribute)
          and node.func.attr in _DATASET_CALLS
          and node.args
      ):
        yield f"{where}:{node.lineno}", node.args[0]


def test_every_dataset_function_is_traced_as_written():
  # tf.data hands what it maps to AutoGraph unless the function is marked,
  # and a pipeline built outside a trainer's marked builder paid for it
  # (tests/albert/pretraining_data/test_documents_reader.py counts them).
  sites = dict(_dataset_function_sites())
  assert len(sites) >= 8, sites
  unmarked = sorted(
      where
      for where, argument in sites.items()
      if not (
          isinstance(argument, ast.Call)
          and ast.unparse(argument.func) == "as_written"
      )
  )
  assert not unmarked, unmarked
