"""transformers weight files: dtypes, machines without torch, pickles."""

import json
import struct
import sys

import numpy as np
import pytest
from safetensors.numpy import save_file

from albert.checkpoint_conversion import safetensors_io
from albert.checkpoint_conversion.errors import ConversionError


def _raw_safetensors(path, name, dtype, shape, data: bytes):
  """A safetensors file written byte by byte (numpy has no bfloat16)."""
  header = json.dumps(
      {name: {"dtype": dtype, "shape": shape, "data_offsets": [0, len(data)]}}
  ).encode()
  with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(header)) + header + data)


def test_float16_is_widened_exactly_and_float32_kept(tmp_path):
  halves = np.array([0.1, -2.5, 65504.0], np.float16)
  save_file(
      {
          "h": halves,
          "f": np.arange(3, dtype=np.float32),
          "ids": np.arange(4, dtype=np.int64),
      },
      str(tmp_path / "model.safetensors"),
  )
  tensors, path = safetensors_io.read_weights(str(tmp_path))
  assert path.endswith("model.safetensors")
  assert tensors["h"].dtype == np.float32
  np.testing.assert_array_equal(tensors["h"], halves.astype(np.float32))
  assert tensors["f"].dtype == np.float32 and tensors["ids"].dtype == np.int64


def test_bfloat16_is_refused_by_name(tmp_path):
  _raw_safetensors(
      tmp_path / "model.safetensors",
      "albert.pooler.weight",
      "BF16",
      [2],
      b"\x80\x3f\x00\x40",
  )
  with pytest.raises(
      ConversionError,
      match="tensor albert.pooler.weight has dtype BF16; only F32 and F16",
  ):
    safetensors_io.read_weights(str(tmp_path))


def test_pytorch_file_without_torch_says_what_to_install(tmp_path, monkeypatch):
  (tmp_path / "pytorch_model.bin").write_bytes(b"not read")
  monkeypatch.setitem(sys.modules, "torch", None)  # import torch fails
  with pytest.raises(ConversionError, match="needs torch"):
    safetensors_io.read_weights(str(tmp_path))


class _NotATensor:  # pickled by torch.save below; must never be unpickled
  pass


def test_pytorch_file_with_arbitrary_objects_is_refused(tmp_path):
  torch = pytest.importorskip("torch")
  torch.save(
      {"a": torch.zeros(2), "b": _NotATensor()}, tmp_path / "pytorch_model.bin"
  )
  with pytest.raises(ConversionError, match="cannot read .*pytorch_model.bin"):
    safetensors_io.read_weights(str(tmp_path))
  torch.save(
      {"a": torch.zeros(2, dtype=torch.bfloat16)},
      tmp_path / "pytorch_model.bin",
  )
  tensors, _ = safetensors_io.read_weights(str(tmp_path))
  assert tensors["a"].dtype == np.float32
