"""Shared by the serving tests: a tiny pretrained model directory and its
export (`python -m albert.run_export`), made once per test process."""

import json
import subprocess
import sys

import pytest
import tensorflow as tf

from albert.modeling.encoder import AlbertEncoder
from albert.modeling.pretrainer import AlbertPretrainer
from tests import helpers

SEQ = 24  # the export's seq_length


def export_model(model_dir, spm_model, out, *flags):
  """`python -m albert.run_export` of the fixture's ckpt-1 into out."""
  run = subprocess.run(
      [
          sys.executable,
          "-m",
          "albert.run_export",
          f"--model_dir={model_dir}",
          f"--checkpoint={model_dir}/ckpt-1",
          f"--spm_model_file={spm_model}",
          f"--export_dir={out}",
          f"--seq_length={SEQ}",
          *flags,
      ],
      cwd=helpers.REPO,
      env=helpers.ENV,
      capture_output=True,
      text=True,
      timeout=600,
  )
  assert run.returncode == 0, run.stderr[-3000:]
  return out


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory, spm_model):
  root = tmp_path_factory.mktemp("export_model")
  config = helpers.tiny_config(
      vocab_size=2000,
      embedding_size=16,
      hidden_size=32,
      num_heads=4,
      intermediate_size=64,
      max_position_embeddings=64,
  )
  tf.random.set_seed(3)
  pretrainer = AlbertPretrainer(AlbertEncoder.from_config_object(config))
  pretrainer(pretrainer.dummy_inputs())
  tf.train.Checkpoint(model=pretrainer).write(str(root / "ckpt-1"))
  (root / "model_config.json").write_text(json.dumps(config.to_dict()))
  return root, pretrainer


@pytest.fixture(scope="session")
def export_dir(model_dir, spm_model, tmp_path_factory):
  """The three SavedModels of `model_dir` (read only: tests share it)."""
  return export_model(
      model_dir[0],
      spm_model,
      tmp_path_factory.mktemp("exports") / "albert",
      "--top_k=3",
  )
