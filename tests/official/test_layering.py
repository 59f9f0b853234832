"""The architecture holds: official/ is generic (no module in it imports
albert/), albert/ imports point down its layers, one Keras, small files."""

import ast
import pathlib
import re

from tests import helpers

OFFICIAL = pathlib.Path(helpers.REPO) / "official"


def _imported_modules(path):
  tree = ast.parse(path.read_text(), filename=str(path))
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom) and node.module:
      yield node.module


def test_official_never_imports_albert():
  files = sorted(OFFICIAL.rglob("*.py"))
  assert len(files) >= 8
  offenders = [
      f"{f.relative_to(OFFICIAL.parent)} imports {m}"
      for f in files
      for m in _imported_modules(f)
      if m == "albert" or m.startswith("albert.")
  ]
  assert not offenders, offenders


def test_one_keras_everywhere():
  """tf_keras only: no module uses tf.keras or standalone keras."""
  root = OFFICIAL.parent
  offenders = []
  for f in sorted(root.glob("albert/**/*.py")) + sorted(OFFICIAL.rglob("*.py")):
    text = f.read_text()
    for module in _imported_modules(f):
      if module == "keras" or module.startswith("keras."):
        offenders.append(f"{f}: import {module}")
    if "tf.keras" in text:
      offenders.append(f"{f}: tf.keras")
  assert not offenders, offenders


# The architecture, top to bottom: a module may import its own unit and the
# units of lower layers only (docs/architecture.md draws it). A unit is a
# package below albert/ (albert/finetuning) or a top-level module
# (albert/model_dir.py).
LAYERS = (
    (
        "run_pretraining",
        "run_finetuning",
        "run_export",
        "export_tflite",
        "fetch",
    ),
    ("cli",),
    ("benchmarks", "experiments", "seeds", "checkpoint_conversion.convert"),
    ("finetuning", "pretraining"),
    ("registry",),
    ("checkpoint_conversion",),
    ("serving", "warm_start", "pretraining_data"),
    ("model_dir", "features", "text"),
    ("modeling", "configs", "environment"),
)
MAX_LIBRARY_LINES = 450
MAX_LOCAL_IMPORTS = 10


# A unit named package.module (a package's entry above the package's other
# modules) is that module alone; the rest of the package is the package's.
_MODULE_UNITS = {unit for layer in LAYERS for unit in layer if "." in unit}


def _unit(module: str) -> str:
  parts = module.split(".")
  if parts[0] != "albert" or len(parts) == 1:
    return parts[0]
  dotted = ".".join(parts[1:3])
  return dotted if dotted in _MODULE_UNITS else parts[1]


def _library_files():
  root = OFFICIAL.parent
  return sorted(root.glob("albert/**/*.py")) + sorted(OFFICIAL.rglob("*.py"))


def _module_name(path) -> str:
  parts = list(path.relative_to(OFFICIAL.parent).with_suffix("").parts)
  return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_imports(path):
  """(imported module, whether inside a function) of albert/official."""
  tree = ast.parse(path.read_text(), filename=str(path))

  def visit(node, local):
    for child in ast.iter_child_nodes(node):
      inner = local or isinstance(
          child, (ast.FunctionDef, ast.AsyncFunctionDef)
      )
      names = []
      if isinstance(child, ast.Import):
        names = [a.name for a in child.names]
      elif isinstance(child, ast.ImportFrom) and child.module:
        # `from albert.package import module_unit` imports that unit.
        names = [
            f"{child.module}.{a.name}"
            for a in child.names
            if _unit(f"{child.module}.{a.name}") in _MODULE_UNITS
        ] or [child.module]
      for name in names:
        if name.split(".")[0] in ("albert", "official"):
          yield name, local
      yield from visit(child, inner)

  yield from visit(tree, False)


def test_albert_imports_point_down_the_layers():
  layer_of = {unit: i for i, units in enumerate(LAYERS) for unit in units}
  offenders = []
  for f in sorted((OFFICIAL.parent / "albert").rglob("*.py")):
    unit = _unit(_module_name(f))
    if unit == "albert":
      continue  # albert/__init__.py
    assert unit in layer_of, f"{f}: add its unit {unit!r} to LAYERS"
    for module, _ in _package_imports(f):
      target = _unit(module)
      if module.startswith("official") or target in ("albert", unit):
        continue
      if layer_of[target] <= layer_of[unit]:
        offenders.append(f"{f} ({unit}) imports {module} ({target})")
  assert not offenders, offenders


def test_the_architecture_page_draws_the_layers():
  """docs/architecture.md's drawing of the layers is LAYERS, line by line."""
  text = (OFFICIAL.parent / "docs" / "architecture.md").read_text()
  block = text.split("```\nrun_pretraining,", 1)[1].split("```", 1)[0]
  drawn = []
  for line in ("run_pretraining," + block).splitlines():
    if line.startswith("official/"):
      break
    units = re.split(r"\s{2,}", line.strip())[0]
    drawn.append(tuple(unit.strip() for unit in units.split(",")))
  assert tuple(drawn) == LAYERS, drawn


def test_few_function_local_imports_of_the_package():
  """Each one hides an arrow of the architecture: only an optional
  dependency or a start-up cost justifies one."""
  local = [
      f"{f}: {module}"
      for f in _library_files()
      for module, inside in _package_imports(f)
      if inside
  ]
  assert len(local) <= MAX_LOCAL_IMPORTS, local


def test_no_library_file_over_the_size_limit():
  long = [
      f"{f}: {n} lines"
      for f in _library_files()
      if (n := len(f.read_text().splitlines())) > MAX_LIBRARY_LINES
  ]
  assert not long, long


_LISTED = re.compile(r"^\s*([a-z_][a-z0-9_]*)/?\s{2,}\S")


def test_package_docstrings_list_their_modules():
  """A package docstring that lists its modules (lines `name  what it is`)
  names every module and subpackage of it, and nothing else."""
  root = OFFICIAL.parent
  inits = sorted(root.glob("albert/**/__init__.py")) + sorted(
      OFFICIAL.rglob("__init__.py")
  )
  checked = []
  for init in inits:
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    listed = {
        m.group(1) for line in doc.splitlines() if (m := _LISTED.match(line))
    }
    if len(listed) < 3:
      continue
    package = init.parent
    present = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    present |= {
        p.name for p in package.iterdir() if (p / "__init__.py").exists()
    }
    assert listed == present, (str(init), sorted(listed ^ present))
    checked.append(package.name)
  assert len(checked) >= 8, checked
