"""official/ is generic: no module in it imports albert/."""

import ast
import pathlib

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
