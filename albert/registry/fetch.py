"""`fetch(spec)`: a ready model directory of ours for a released model's
name, a transformers repository (`hf://OWNER/REPO[@REVISION]`), or a local
directory or archive in the original release's or the transformers layout.

A fetched model lives in the cache (`$ALBERT_TF2_CACHE`, default
`~/.cache/albert_tf2`):

  models/KEY/            the model directory (ckpt-N, model_config.json,
                         albert_config.json, the tokenizer file) and
                         fetched.json (where it came from, the digest checked)
  downloads/KEY/         the bytes on their way (`*.part` resume after an
                         interruption); removed once the model is converted
  locks/KEY.lock         held while one process fetches KEY; a second waits

A model already in the cache is returned without touching the network. With
`ALBERT_TF2_OFFLINE=1` (or `HF_HUB_OFFLINE=1`) nothing else is: a name not in
the cache is one line naming the directory to copy in. Each source of a name
is tried in the registry's order; a failing one (an HTTP error, a transfer
that keeps failing, a wrong digest, an archive that does not convert) falls
back to the next, and when all fail the one line names each failure.
"""

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
import time
import zipfile
from typing import Dict, Iterator, List, Optional, Tuple

from absl import logging
import tensorflow as tf


from albert.checkpoint_conversion import huggingface
from albert.checkpoint_conversion import model_garden
from albert.checkpoint_conversion import original
from albert.checkpoint_conversion.errors import ConversionError
from albert.registry import catalog
from albert.registry.catalog import Source
from official.errors import InputError
from official.core import model_config_file
from official.errors import first_line
from official.io import download as download_lib
from official.io import files

CACHE_ENV = "ALBERT_TF2_CACHE"
OFFLINE_ENVS = ("ALBERT_TF2_OFFLINE", "HF_HUB_OFFLINE")
RECORD_FILE = "fetched.json"
HF_PREFIX = "hf://"
# What a transformers repository holds that a model directory of ours needs:
# required, then optional (the tokenizer of the released ALBERT repositories).
HF_REQUIRED = ("config.json",)
HF_WEIGHTS = ("model.safetensors", "pytorch_model.bin")
HF_OPTIONAL = ("spiece.model",)
ARCHIVES = (".tar.gz", ".tgz", ".tar", ".zip")
_HF_SPEC = re.compile(r"^hf://([\w.-]+/[\w.-]+)(?:@([\w./-]+))?$")


class FetchError(InputError):
  """A model could not be fetched (one line: what, why, what to do)."""


def cache_dir() -> str:
  return os.path.abspath(
      os.environ.get(CACHE_ENV)
      or os.path.join(os.path.expanduser("~"), ".cache", "albert_tf2")
  )


def offline() -> bool:
  return any(
      os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on")
      for v in OFFLINE_ENVS
  )


def is_reference(value: Optional[str]) -> bool:
  """Whether a flag's value names a model to fetch (a registry name or
  hf://...) rather than a path; an existing path always stays a path."""
  if not value or os.path.exists(value):
    return False
  return value.startswith(HF_PREFIX) or catalog.lookup(value) is not None


# Strategies that must start before any TensorFlow op runs in the process
# (a conversion runs some): there a name must already be in the cache.
_STARTS_FIRST = ("multi_worker", "tpu")


def resolve(
    value: Optional[str],
    *,
    before_strategy: Optional[str] = None,
    progress=sys.stderr,
) -> Optional[str]:
  """The model directory a flag's value stands for: a name or hf://... is
  fetched (or found in the cache); anything else is returned unchanged.

  `before_strategy`: the `--strategy` the run starts next. A multi-worker or
  TPU strategy must start before any TensorFlow op, and a conversion runs
  some: there a name not yet in the cache is one line (fetch it first).
  """
  if not is_reference(value):
    return value
  if before_strategy in _STARTS_FIRST and not _is_ready(
      model_path(_key_of(value))
  ):
    raise FetchError(
        f"{value} is not in the cache, and a --strategy={before_strategy} "
        "run cannot convert it before its strategy starts: run "
        f"`albert-fetch {value}` first (on each host)"
    )
  return fetch(value, progress=progress)


def _key_of(spec: str) -> str:
  """The cache key of a name or an hf:// reference."""
  if spec.startswith(HF_PREFIX):
    repo, revision = _hf_parts(spec)
    return f"hf--{repo.replace('/', '--')}--{revision.replace('/', '--')}"
  return spec


def _hf_parts(spec: str) -> Tuple[str, str]:
  match = _HF_SPEC.match(spec)
  if not match:
    raise FetchError(f"{spec}: not hf://OWNER/REPO or hf://OWNER/REPO@REVISION")
  return match.group(1), match.group(2) or "main"


def fetch(
    spec: str,
    *,
    source: Optional[str] = None,
    progress=sys.stderr,
) -> str:
  """The path of a ready model directory for `spec` (see the module
  docstring); `source` limits a name to its sources of that kind."""
  if spec.startswith(HF_PREFIX):
    repo, revision = _hf_parts(spec)
    hf = Source(kind="huggingface", repo=repo, revision=revision)
    return _fetch(spec, _key_of(spec), [hf], progress)
  entry = catalog.lookup(spec)
  if entry is not None:
    sources = [s for s in entry.sources if source in (None, s.kind)]
    if not sources:
      raise FetchError(
          f"{spec} has no {source} source; its sources: "
          + ", ".join(s.kind for s in entry.sources)
      )
    return _fetch(spec, spec, sources, progress)
  if os.path.isdir(spec):
    if _is_our_model_dir(spec):
      return spec
    return _fetch(spec, _local_key(spec), [None], progress, local=spec)
  if os.path.isfile(spec) and spec.endswith(ARCHIVES):
    return _fetch(spec, _local_key(spec), [None], progress, local=spec)
  raise FetchError(
      f"{spec}: not a model name (albert-fetch --list), hf://OWNER/REPO, a "
      "model directory, or a release directory or archive"
  )


# --- The cache ----------------------------------------------------------------


def model_path(key: str) -> str:
  return os.path.join(cache_dir(), "models", key)


def _is_ready(path: str) -> bool:
  return os.path.isfile(os.path.join(path, RECORD_FILE))


def _is_our_model_dir(path: str) -> bool:
  return os.path.isfile(
      os.path.join(path, model_config_file.FILE_NAME)
  ) and bool(tf.train.latest_checkpoint(path))


def _local_key(path: str) -> str:
  real = os.path.realpath(path)
  digest = hashlib.sha256(real.encode()).hexdigest()[:12]
  stem = re.sub(r"[^\w.-]", "_", os.path.basename(real.rstrip("/")))
  return f"local--{stem}--{digest}"


@contextlib.contextmanager
def _lock(key: str, label: str) -> Iterator[None]:
  """Holds locks/KEY.lock; a second process fetching KEY waits here."""
  directory = os.path.join(cache_dir(), "locks")
  os.makedirs(directory, exist_ok=True)
  fd = os.open(os.path.join(directory, f"{key}.lock"), os.O_RDWR | os.O_CREAT)
  try:
    try:
      fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
      logging.info("%s: another process is fetching it; waiting", label)
      fcntl.flock(fd, fcntl.LOCK_EX)
    yield
  finally:
    os.close(fd)  # releases the lock


def _fetch(label, key, sources, progress, local=None) -> str:
  final = model_path(key)
  if _is_ready(final):
    logging.info("%s: in the cache, %s", label, final)
    return final
  if offline() and local is None:
    raise FetchError(
        f"{label} is not in the cache and {'/'.join(OFFLINE_ENVS)} forbids "
        f"the network: run `albert-fetch {label}` on a machine with one and "
        f"copy its {os.path.join('models', key)} to {final}, or unset "
        "ALBERT_TF2_OFFLINE / HF_HUB_OFFLINE"
    )
  with _lock(key, label):
    if _is_ready(final):  # fetched by the process we waited for
      return final
    failures = []
    for source in sources:
      parent = os.path.dirname(final)
      os.makedirs(parent, exist_ok=True)
      staging = tempfile.mkdtemp(prefix=f".{key}.partial-", dir=parent)
      try:
        record = _build(source, key, local, staging, progress)
        record.update(name=label, fetched=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        model = os.path.join(staging, "model")
        with open(os.path.join(model, RECORD_FILE), "w") as f:
          json.dump(record, f, indent=2, sort_keys=True)
        if os.path.isdir(final):  # an unfinished copy of an older version
          shutil.rmtree(final)
        os.rename(model, final)
        shutil.rmtree(os.path.join(cache_dir(), "downloads", key), True)
        logging.info("%s: ready in %s", label, final)
        return final
      except (InputError, ConversionError, OSError) as e:
        where = source.describe() if source is not None else local
        failures.append(f"{where}: {first_line(e)}")
        if source is not None and len(failures) < len(sources):
          logging.warning("%s: %s; trying the next source", label, failures[-1])
      finally:
        shutil.rmtree(staging, True)
    raise FetchError(f"{label}: " + "; ".join(failures))


# --- Building a model directory from each kind of source ---------------------


def _build(source, key, local, staging, progress) -> Dict:
  model = os.path.join(staging, "model")
  if source is None:
    return _from_local(local, staging, model)
  downloads = os.path.join(cache_dir(), "downloads", key)
  os.makedirs(downloads, exist_ok=True)
  if source.kind == "original":
    archive = os.path.join(downloads, source.file)
    digest = _download(source.url(), archive, source.sha256, progress)
    size = os.path.getsize(archive)
    if source.bytes is not None and size != source.bytes:
      raise FetchError(f"{source.url()}: {size} bytes, not {source.bytes}")
    _convert_release(_unpack(archive, os.path.join(staging, "unpacked")), model)
    return dict(source=source.describe(), sha256=digest, bytes=size)
  if source.kind == "huggingface":
    digests = _download_repository(source, downloads, progress)
    _convert_transformers(downloads, model)
    return dict(source=source.describe(), sha256=digests)
  return _from_kaggle(source, model)


def _download(url: str, path: str, sha256, progress) -> str:
  if os.path.isfile(path):  # complete: downloads are renamed only then
    digest = files.file_sha256(path)
    if sha256 and digest != sha256.lower():
      os.remove(path)
    else:
      return digest
  return download_lib.download(url, path, sha256=sha256, progress=progress)


def _download_repository(source: Source, folder: str, progress) -> Dict:
  digests = {}
  for name in HF_REQUIRED:
    digests[name] = _download(
        source.url(name), os.path.join(folder, name), None, progress
    )
  for i, name in enumerate(HF_WEIGHTS):
    try:
      path = os.path.join(folder, name)
      digests[name] = _download(source.url(name), path, None, progress)
      break
    except download_lib.HttpError as e:
      if e.status != 404 or i == len(HF_WEIGHTS) - 1:
        raise
  for name in HF_OPTIONAL:
    try:
      path = os.path.join(folder, name)
      digests[name] = _download(source.url(name), path, None, progress)
    except download_lib.HttpError as e:
      if e.status != 404:
        raise
  return digests


def _unpack(archive: str, folder: str) -> str:
  os.makedirs(folder)
  try:
    if archive.endswith(".zip"):
      with zipfile.ZipFile(archive) as z:
        for member in z.namelist():
          target = os.path.realpath(os.path.join(folder, member))
          if not target.startswith(os.path.realpath(folder) + os.sep):
            raise FetchError(f"{archive}: member {member} leaves the archive")
        z.extractall(folder)
    else:
      with tarfile.open(archive) as t:
        t.extractall(folder, filter="data")
  except (tarfile.TarError, zipfile.BadZipFile, EOFError) as e:
    raise FetchError(f"{archive}: not a readable archive ({e})") from None
  return folder


def _find(folder: str, marker: str) -> Optional[str]:
  """The shallowest directory under `folder` holding `marker`."""
  found = []
  for root, _, names in os.walk(folder):
    if marker in names:
      found.append(root)
  return min(found, key=lambda p: p.count(os.sep)) if found else None


def _checkpoint_in(folder: str) -> Optional[str]:
  indexes = sorted(
      n[: -len(".index")] for n in os.listdir(folder) if n.endswith(".index")
  )
  if not indexes:
    return None
  best = [n for n in indexes if n.endswith("-best")]
  return os.path.join(folder, (best or indexes)[-1])


def _convert_release(folder: str, model: str) -> None:
  """An unpacked original release (albert_config.json beside a TF1
  checkpoint and its tokenizer file) -> a model directory of ours."""
  where = _find(folder, "albert_config.json")
  prefix = _checkpoint_in(where) if where else None
  if prefix is None:
    raise FetchError(
        f"{folder}: no albert_config.json beside a TF1 checkpoint (*.index); "
        "not the original release's layout"
    )
  original.from_original(
      checkpoint=prefix, albert_config=None, output_dir=model
  )


def _convert_transformers(folder: str, model: str) -> None:
  huggingface.from_huggingface(checkpoint=folder, output_dir=model)


def _from_local(path: str, staging: str, model: str) -> Dict:
  folder = path
  if os.path.isfile(path):
    folder = _unpack(path, os.path.join(staging, "unpacked"))
  if _find(folder, "albert_config.json"):
    _convert_release(folder, model)
  elif _find(folder, "config.json"):
    _convert_transformers(_find(folder, "config.json"), model)
  else:
    raise FetchError(
        f"{path}: neither the original release's layout (albert_config.json "
        "and a TF1 checkpoint) nor a transformers repository (config.json)"
    )
  return dict(source=os.path.realpath(path))


def _from_kaggle(source: Source, model: str) -> Dict:
  try:
    import kagglehub  # pylint: disable=g-import-not-at-top (optional extra)
  except ImportError:
    raise FetchError(
        "kagglehub is not installed: pip install 'albert-tf2[kaggle]'"
    ) from None
  path = kagglehub.model_download(source.handle)
  model_garden.from_tf_hub(
      checkpoint=path, albert_config=None, output_dir=model
  )
  return dict(source=source.describe())


def cached() -> List[Tuple[str, str]]:
  """(key, path) of every ready model in the cache."""
  root = os.path.join(cache_dir(), "models")
  if not os.path.isdir(root):
    return []
  return [
      (key, os.path.join(root, key))
      for key in sorted(os.listdir(root))
      if _is_ready(os.path.join(root, key))
  ]
