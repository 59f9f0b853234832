"""The `Example:` of the public entry points' docstrings run as doctests
(`make test-fast` included)."""

import doctest
import tempfile

import pytest

from albert import model_dir
from albert.modeling import classifier
from albert.modeling import encoder
from albert.modeling import pooling
from albert.modeling import pretrainer
from albert.serving import exporter


@pytest.mark.parametrize(
    "module",
    [encoder, pretrainer, classifier, pooling, model_dir, exporter],
    ids=lambda m: m.__name__,
)
def test_docstring_examples_run(module, tmp_path, monkeypatch):
  # What an example makes with `tempfile` goes under the test's directory.
  monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
  result = doctest.testmod(
      module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
  )
  assert result.attempted >= 4, result
  assert result.failed == 0, result
