"""Shared by the serving tests: a tiny pretrained model directory and its
export (`python -m albert.run_export`), made once per test run."""

import json
import re
import sys

import pytest
import tensorflow as tf
import tf_keras

from albert.modeling.encoder import AlbertEncoder
from albert.modeling.pretrainer import AlbertPretrainer
from tests import helpers

SEQ = 24  # the export's seq_length


def export_model(model_dir, spm_model, out, *flags):
  """`python -m albert.run_export` of the fixture's ckpt-1 into out."""
  run = helpers.run(
      [
          "-m",
          "albert.run_export",
          f"--model_dir={model_dir}",
          f"--checkpoint={model_dir}/ckpt-1",
          f"--spm_model_file={spm_model}",
          f"--export_dir={out}",
          f"--seq_length={SEQ}",
          *flags,
      ],
      timeout=600,
  )
  assert run.returncode == 0, run.stderr[-3000:]
  return out


# What docs/serving.md's examples call the export directory.
DOCS_EXPORT_DIR = 'export_dir = "/tmp/albert_export"'


def run_docs_block(marker: str, export_dir, checks: str):
  """docs/serving.md's one python block containing `marker`, run as written
  in a fresh process (only its export directory changed to `export_dir`),
  with `checks` appended; the finished process."""
  with open(f"{helpers.REPO}/docs/serving.md", encoding="utf-8") as f:
    blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
  (block,) = [b for b in blocks if marker in b]
  assert DOCS_EXPORT_DIR in block
  script = block.replace(DOCS_EXPORT_DIR, f"export_dir = {str(export_dir)!r}")
  return helpers.run([sys.executable, "-c", script + checks], timeout=600)


CONFIG = helpers.tiny_config(
    vocab_size=2000,
    embedding_size=16,
    hidden_size=32,
    num_heads=4,
    intermediate_size=64,
    max_position_embeddings=64,
)


def _write_model(root):
  # Every seed (Keras draws its initialisers' from Python's `random`): the
  # same weights whatever ran before in the worker that makes them.
  tf_keras.utils.set_random_seed(3)
  pretrainer = AlbertPretrainer(AlbertEncoder.from_config_object(CONFIG))
  pretrainer(pretrainer.dummy_inputs())
  tf.train.Checkpoint(model=pretrainer).write(str(root / "ckpt-1"))
  (root / "model_config.json").write_text(json.dumps(CONFIG.to_dict()))


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory):
  """(a tiny pretrained model directory, its model), made once per run."""
  root = helpers.made_once(tmp_path_factory, "export_model", _write_model)
  pretrainer = AlbertPretrainer(AlbertEncoder.from_config_object(CONFIG))
  pretrainer(pretrainer.dummy_inputs())
  tf.train.Checkpoint(model=pretrainer).read(
      str(root / "ckpt-1")
  ).assert_existing_objects_matched()
  return root, pretrainer


@pytest.fixture(scope="session")
def export_dir(model_dir, spm_model, tmp_path_factory):
  """The three SavedModels of `model_dir`, made once per run (read only:
  tests share it)."""
  exports = helpers.made_once(
      tmp_path_factory,
      "exports",
      lambda path: export_model(
          model_dir[0], spm_model, path / "albert", "--top_k=3"
      ),
  )
  return exports / "albert"
