"""The released models by name: `models.json` (packaged with the wheel),
merged with the entries of `$ALBERT_TF2_REGISTRY` (a JSON file of the same
form: a private mirror's models, or digests measured once), and where each
source's bytes are.

A source is one of:
  original     the original release's TF1 checkpoint tarball, FILE under
               `$ALBERT_TF2_MODELS_ENDPOINT` (default the release's bucket)
  huggingface  a transformers repository, REPO under `$HF_ENDPOINT` (default
               https://huggingface.co), at a revision (default main)
  kaggle       a TF Hub / Kaggle handle, read through `kagglehub` (an optional
               extra) when it is installed
"""

import dataclasses
import json
import os
from typing import Dict, List, Optional, Tuple

from official.errors import InputError
from official.io import files

REGISTRY_ENV = "ALBERT_TF2_REGISTRY"
MODELS_ENDPOINT_ENV = "ALBERT_TF2_MODELS_ENDPOINT"
MODELS_ENDPOINT = "https://storage.googleapis.com/albert_models"
HF_ENDPOINT_ENV = "HF_ENDPOINT"  # as huggingface_hub reads it
HF_ENDPOINT = "https://huggingface.co"
KINDS = ("original", "huggingface", "kaggle")
TOKENIZERS = ("sentencepiece", "wordpiece")
_PACKAGED = os.path.join(os.path.dirname(__file__), "models.json")


@dataclasses.dataclass(frozen=True)
class Source:
  """Where one copy of a model is; `file`/`sha256`/`bytes` for original,
  `repo`/`revision` for huggingface, `handle` for kaggle."""

  kind: str
  file: Optional[str] = None
  sha256: Optional[str] = None
  bytes: Optional[int] = None
  repo: Optional[str] = None
  revision: str = "main"
  handle: Optional[str] = None

  def url(self, name: str = "") -> str:
    """The URL of the tarball (original) or of `name` in the repository."""
    if self.kind == "original":
      base = os.environ.get(MODELS_ENDPOINT_ENV) or MODELS_ENDPOINT
      return f"{base.rstrip('/')}/{self.file}"
    if self.kind == "huggingface":
      base = os.environ.get(HF_ENDPOINT_ENV) or HF_ENDPOINT
      return f"{base.rstrip('/')}/{self.repo}/resolve/{self.revision}/{name}"
    return f"kaggle://{self.handle}"

  def describe(self) -> str:
    if self.kind == "original":
      return self.url()
    if self.kind == "huggingface":
      return f"hf://{self.repo}@{self.revision}"
    return f"kaggle://{self.handle}"


@dataclasses.dataclass(frozen=True)
class Entry:
  """One released model."""

  name: str
  description: str
  size: Optional[str]
  language: str
  tokenizer: str
  tokenizer_file: Optional[str]
  sources: Tuple[Source, ...]


def _entry(name: str, fields: Dict, origin: str) -> Entry:
  try:
    sources = tuple(Source(**s) for s in fields["sources"])
    entry = Entry(
        name=name,
        **{k: v for k, v in fields.items() if k != "sources"},
        sources=sources,
    )
  except (KeyError, TypeError) as e:
    raise InputError(
        f"{origin}: model {name!r} is not a registry entry ({e}); see "
        "docs/models.md for the fields"
    ) from None
  bad = [s.kind for s in entry.sources if s.kind not in KINDS]
  if bad or entry.tokenizer not in TOKENIZERS or not entry.sources:
    raise InputError(
        f"{origin}: model {name!r}: sources must be of kinds {KINDS} (got "
        f"{bad}) and tokenizer one of {TOKENIZERS}"
    )
  return entry


def _read(path: str) -> Dict[str, Dict]:
  try:
    data = json.loads(files.read_text(path, what="the model registry"))
  except json.JSONDecodeError as e:
    raise InputError(
        f"{path}: not JSON ({e.msg}); fix the registry file"
    ) from None
  if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
    raise InputError(f'{path}: needs {{"models": {{NAME: entry, ...}}}}')
  return data["models"]


def load() -> Dict[str, Entry]:
  """Every entry by name: the packaged ones, then `$ALBERT_TF2_REGISTRY`'s
  (which replace packaged entries of the same name)."""
  entries = {n: _entry(n, f, _PACKAGED) for n, f in _read(_PACKAGED).items()}
  extra = os.environ.get(REGISTRY_ENV)
  if extra:
    entries.update({n: _entry(n, f, extra) for n, f in _read(extra).items()})
  return entries


def lookup(name: str) -> Optional[Entry]:
  return load().get(name)


def table(entries: Optional[Dict[str, Entry]] = None) -> List[str]:
  """`albert-fetch --list`: one line per model."""
  entries = load() if entries is None else entries
  rows = [("name", "language", "tokenizer", "sources", "description")]
  for name in sorted(entries):
    e = entries[name]
    kinds = ",".join(s.kind for s in e.sources)
    rows.append((name, e.language, e.tokenizer, kinds, e.description))
  widths = [max(len(r[i]) for r in rows) for i in range(4)]
  return [
      "  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4]
      for r in rows
  ]
