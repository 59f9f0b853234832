"""Reading and writing Hugging Face model directories as numpy arrays.

A transformers model directory holds `config.json` and its weights in
`model.safetensors` (read and written with `safetensors.numpy`: no torch
needed) or, for older models, `pytorch_model.bin` (read only, and only when
torch is installed, with `torch.load(weights_only=True)`: tensors and plain
containers, never arbitrary pickled objects).
"""

import json
import os
from typing import Any, Dict, Tuple

from absl import logging
import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

from albert.checkpoint_conversion.errors import ConversionError
from official.io import atomic_write
from official.errors import first_line

CONFIG_FILE = "config.json"
SAFETENSORS_FILE = "model.safetensors"
PYTORCH_FILE = "pytorch_model.bin"
# safetensors dtypes read exactly as float32 (or kept, for integer buffers).
_UPCAST = ("F16",)
_KEPT = ("F32", "I64", "I32")


def read_config(hf_dir: str) -> Dict[str, Any]:
  """The contents of HF_DIR/config.json."""
  path = os.path.join(hf_dir, CONFIG_FILE)
  if not os.path.isfile(path):
    raise ConversionError(
        f"{path} not found: a Hugging Face model directory "
        "holds config.json (save it with save_pretrained)"
    )
  try:
    with open(path, encoding="utf-8") as f:
      data = json.load(f)
  except (OSError, json.JSONDecodeError) as e:
    raise ConversionError(f"cannot read {path}: {e}") from e
  if not isinstance(data, dict):
    raise ConversionError(f"{path} must hold a JSON object")
  return data


def read_weights(hf_dir: str) -> Tuple[Dict[str, np.ndarray], str]:
  """(name -> array, the file read) of a transformers model directory.

  `model.safetensors` is preferred over `pytorch_model.bin`. Float16 tensors
  are widened to float32 (exactly); bfloat16 safetensors are refused.
  """
  if not os.path.isdir(hf_dir):
    raise ConversionError(
        f"--checkpoint={hf_dir} is not a directory; give "
        "the Hugging Face model directory (config.json + "
        f"{SAFETENSORS_FILE} or {PYTORCH_FILE})"
    )
  path = os.path.join(hf_dir, SAFETENSORS_FILE)
  if os.path.isfile(path):
    return _read_safetensors(path), path
  path = os.path.join(hf_dir, PYTORCH_FILE)
  if os.path.isfile(path):
    return _read_pytorch(path), path
  sharded = [n for n in os.listdir(hf_dir) if n.endswith(".index.json")]
  hint = f" (sharded weights {sharded[0]} are not supported)" if sharded else ""
  raise ConversionError(
      f"{hf_dir} holds neither {SAFETENSORS_FILE} nor {PYTORCH_FILE}{hint}"
  )


def _read_safetensors(path: str) -> Dict[str, np.ndarray]:
  tensors = {}
  try:
    with safe_open(path, framework="np") as f:
      for name in f.keys():
        dtype = f.get_slice(name).get_dtype()
        if dtype not in _KEPT + _UPCAST:
          raise ConversionError(
              f"{path}: tensor {name} has dtype {dtype}; only F32 and F16 "
              "are read (save the model in float32 first)"
          )
        array = f.get_tensor(name)
        if dtype in _UPCAST:
          array = array.astype(np.float32)
        tensors[name] = array
  except ConversionError:
    raise
  except Exception as e:  # safetensors raises its own error types
    raise ConversionError(f"cannot read {path}: {first_line(e)}") from e
  return tensors


def _read_pytorch(path: str) -> Dict[str, np.ndarray]:
  try:
    import torch
  except ImportError:
    raise ConversionError(
        f"{path}: reading pytorch_model.bin needs torch (pip install torch); "
        f"or save the model with safetensors ({SAFETENSORS_FILE})"
    ) from None
  try:
    # weights_only: tensors and containers only, no arbitrary unpickling.
    state = torch.load(path, map_location="cpu", weights_only=True)
  except Exception as e:  # pickle and torch raise many types
    raise ConversionError(f"cannot read {path}: {first_line(e)}") from e
  if not isinstance(state, dict) or not all(
      isinstance(k, str) and isinstance(v, torch.Tensor)
      for k, v in state.items()
  ):
    raise ConversionError(f"{path} is not a state dict (name -> tensor)")
  tensors = {}
  for name, tensor in state.items():
    if tensor.is_floating_point() and tensor.dtype != torch.float32:
      logging.info(
          "%s: %s widened from %s to float32", path, name, tensor.dtype
      )
      tensor = tensor.float()
    tensors[name] = tensor.detach().contiguous().numpy()
  return tensors


def write_weights(hf_dir: str, tensors: Dict[str, np.ndarray]) -> str:
  """Writes HF_DIR/model.safetensors (as transformers' save_pretrained)."""
  path = os.path.join(hf_dir, SAFETENSORS_FILE)
  # transformers reads the format from the metadata, as save_pretrained
  # writes it.
  save_file(
      {k: np.ascontiguousarray(v) for k, v in tensors.items()},
      path,
      metadata={"format": "pt"},
  )
  atomic_write.chmod_as_created(path)  # safetensors writes it 0600
  return path


def write_config(hf_dir: str, data: Dict[str, Any]) -> str:
  """Writes HF_DIR/config.json."""
  path = os.path.join(hf_dir, CONFIG_FILE)
  with open(path, "w", encoding="utf-8") as f:
    json.dump(data, f, indent=2, sort_keys=True)
    f.write("\n")
  return path
