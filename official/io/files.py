"""Small file helpers shared by data generation, training and fine-tuning."""

import hashlib


def file_sha256(path: str) -> str:
  """Hex SHA-256 of a local file's bytes, read in 1 MB chunks."""
  digest = hashlib.sha256()
  with open(path, "rb") as f:
    for chunk in iter(lambda: f.read(1 << 20), b""):
      digest.update(chunk)
  return digest.hexdigest()
