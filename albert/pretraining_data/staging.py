"""`StagingDirectory`: where a run writes until everything is complete.

Layout of `.STEM.partial-FINGERPRINT/` beside the first shard:
  block-000012.003.rec       records of block 12, pass group 3 (a "unit")
  block-000012.003.rec.json  its BlockStats, written last (= unit done)
  shard-00003.rec            a finished shard (gzipped if asked)
  shard-00003.rec.json       {"units": {"12.3": stats, ...}}, written last
Every file is written under `NAME.tmp-PID` and renamed when complete, so a
crash leaves only complete files and temporaries, which the next run of the
same job removes. The fingerprint in the name keys the directory to the
inputs, options and model.
"""

import glob
import json
import os
import shutil
from typing import Dict, Iterable, Optional, Sequence, Tuple

from absl import logging

from official.io.tfrecord import TFRecordWriter
from official.io import atomic_write

_COPY_BYTES = 1 << 20


def tmp_name(path: str) -> str:
  return f"{path}.tmp-{os.getpid()}"


def write_json_atomic(path: str, obj) -> None:
  """Writes JSON under a temporary name, then renames it into place."""
  atomic_write.write_atomic(path, json.dumps(obj, indent=2) + "\n")


def _read_json(path: str) -> Optional[dict]:
  try:
    with open(path, encoding="utf-8") as f:
      return json.load(f)
  except (OSError, ValueError):
    return None


def unit_key(unit: Tuple[int, int]) -> str:
  return f"{unit[0]}.{unit[1]}"


def move(src: str, dst: str) -> None:
  """Renames src to dst, copying under a temporary name across devices."""
  try:
    os.replace(src, dst)
  except OSError:
    shutil.copyfile(src, tmp_name(dst))
    os.replace(tmp_name(dst), dst)
    os.remove(src)


class StagingDirectory:
  """Finished blocks and shards of one job, kept across crashes."""

  def __init__(self, path: str):
    self.path = path

  def part(self, unit: Tuple[int, int]) -> str:
    return os.path.join(self.path, f"block-{unit[0]:06d}.{unit[1]:03d}.rec")

  def shard(self, shard: int) -> str:
    return os.path.join(self.path, f"shard-{shard:05d}.rec")

  def prepare(self) -> None:
    """Creates the directory; drops temporaries and other jobs' leftovers."""
    prefix = self.path.rsplit("-", 1)[0]
    for stale in glob.glob(glob.escape(prefix) + "-*"):
      if stale != self.path:
        logging.info("Removing %s, left by a run with other options", stale)
        shutil.rmtree(stale, ignore_errors=True)
    os.makedirs(self.path, exist_ok=True)
    for tmp in glob.glob(os.path.join(glob.escape(self.path), "*.tmp-*")):
      os.remove(tmp)

  def unit_stats(self, unit: Tuple[int, int]) -> Optional[dict]:
    return _read_json(self.part(unit) + ".json")

  def shard_marker(self, shard: int) -> Optional[dict]:
    return _read_json(self.shard(shard) + ".json")

  def write_unit(
      self, unit: Tuple[int, int], records: Iterable[bytes], stats
  ) -> dict:
    """Writes a unit's records; `stats` is filled while they are drawn."""
    part = self.part(unit)
    with open(tmp_name(part), "wb") as f:
      TFRecordWriter(f).write_all(records)
    os.replace(tmp_name(part), part)
    result = stats.to_dict()
    write_json_atomic(part + ".json", result)
    return result

  def assemble_shard(
      self,
      shard: int,
      units: Sequence[Tuple[int, int]],
      unit_stats: Dict[Tuple[int, int], dict],
      gzipped: bool,
  ) -> dict:
    """Concatenates finished units into the shard; drops their files."""
    staged = self.shard(shard)
    with open(tmp_name(staged), "wb") as raw:
      writer = TFRecordWriter(raw, gzipped)
      for unit in units:
        with open(self.part(unit), "rb") as part:
          while True:
            chunk = part.read(_COPY_BYTES)
            if not chunk:
              break
            writer.write_framed(chunk, 0)
      writer.close()
      raw.flush()
      os.fsync(raw.fileno())
    os.replace(tmp_name(staged), staged)
    marker = {"units": {unit_key(u): unit_stats[u] for u in units}}
    write_json_atomic(staged + ".json", marker)
    for unit in units:
      for path in (self.part(unit), self.part(unit) + ".json"):
        if os.path.exists(path):
          os.remove(path)
    return marker

  def commit(
      self, paths: Sequence[str], manifest_path: str, manifest: dict
  ) -> None:
    """Moves the shards, then the manifest, into place; removes staging."""
    if os.path.exists(manifest_path):
      os.remove(manifest_path)  # No manifest while shards are replaced.
    for shard, path in enumerate(paths):
      if os.path.exists(self.shard(shard)):  # Else moved by an earlier try.
        move(self.shard(shard), path)
    write_json_atomic(manifest_path, manifest)
    self.remove()

  def remove(self) -> None:
    shutil.rmtree(self.path, ignore_errors=True)
