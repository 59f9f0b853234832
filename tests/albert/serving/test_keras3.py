"""Keras 3 on our SavedModels: docs/serving.md's `keras.layers.TFSMLayer` block,
run as written (only the export directory changed) in a fresh process
without this package; its `pooled_output` is our model's within 1e-5."""

import json
import re

import numpy as np
import pytest

from tests.albert.serving.conftest import run_docs_block

# Every test here needs the exported SavedModels (serving/conftest.py).
pytestmark = pytest.mark.slow

# Appended to docs/serving.md's block; uses its variables.
_CHECKS = r"""
import json, sys
assert keras.__version__.startswith("3."), keras.__version__
assert not any(m == "albert" or m.startswith(("albert.", "official"))
               for m in sys.modules)
print(json.dumps({"ids": ids.tolist(),
                  "pooled": np.asarray(outputs["pooled_output"]).tolist()}))
"""


def test_readme_tfsmlayer_gives_our_pooled_output(model_dir, export_dir):
  _, pretrainer = model_dir
  run = run_docs_block("TFSMLayer", export_dir, _CHECKS)
  assert run.returncode == 0, run.stderr[-3000:]
  lines = run.stdout.strip().splitlines()
  assert re.fullmatch(r"\(1, \d+\)", lines[0]), lines  # docs/serving.md's print
  result = json.loads(lines[-1])
  ids = np.array(result["ids"], np.int32)
  ours = pretrainer.encoder(
      {
          "input_word_ids": ids,
          "input_mask": np.int32(ids > 0),
          "input_type_ids": np.zeros_like(ids),
      },
      training=False,
  )["pooled_output"].numpy()
  assert ours.shape == (1, pretrainer.encoder.config.hidden_size)
  np.testing.assert_allclose(result["pooled"], ours, atol=1e-5)
