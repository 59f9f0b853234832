"""SentencePooling against a numpy reference written from sentence-
transformers' Pooling and Normalize modules' rules."""

import numpy as np
import pytest

from albert.modeling.pooling import MODES
from albert.modeling.pooling import SentencePooling


def _reference(x, mask, mode, normalize):
  m = mask[:, :, None].astype(np.float64)
  x = x.astype(np.float64)
  if mode == "cls":
    out = x[:, 0]
  elif mode == "max":
    out = np.where(m > 0, x, -1e9).max(axis=1)
  else:
    count = np.maximum(m.sum(axis=1), 1e-9)
    total = (x * m).sum(axis=1)
    out = total / (count if mode == "mean" else np.sqrt(count))
  if normalize:
    out = out / np.maximum(np.linalg.norm(out, axis=-1, keepdims=True), 1e-12)
  return out


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_pooling_matches_the_reference(mode, normalize):
  rng = np.random.default_rng(7)
  x = rng.normal(size=(4, 6, 5)).astype(np.float32)
  mask = np.zeros((4, 6), np.int32)
  for row, length in enumerate([6, 3, 1, 2]):
    mask[row, :length] = 1
  x[1, 3:] = 50.0  # padding must not count
  got = SentencePooling(mode=mode, normalize=normalize)(x, mask).numpy()
  want = _reference(x, mask, mode, normalize)
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
  if normalize:
    np.testing.assert_allclose(np.linalg.norm(got, axis=-1), 1.0, rtol=1e-5)


def test_config_round_trip_and_bad_mode():
  layer = SentencePooling(mode="mean_sqrt_len", normalize=True)
  again = SentencePooling.from_config(layer.get_config())
  assert (again.mode, again.normalize) == ("mean_sqrt_len", True)
  with pytest.raises(ValueError, match="pooling mode 'sum'"):
    SentencePooling(mode="sum")
