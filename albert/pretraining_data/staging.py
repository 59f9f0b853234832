"""`StagingDirectory`: where a run writes until everything is complete.

Layout of `.STEM.partial-FINGERPRINT/` beside the first shard:
  pool.npz                   random documents (NSP, random_document)
  pool-block-000012.npz      the documents format: block 12's pool share
  block-000012.003.rec       records of block 12, pass group 3 (a "unit"),
                             sorted by (shard, order) (see global_shuffle)
  block-000012.003.idx.npy   per record: shard, order, framed length,
                             document, tokens; in the same order
  block-000012.003.bounds.npy  [2, shards + 1]: each shard's first row and
                             first byte in the unit
  block-000012.003.rec.json  its BlockStats, written last (= unit done)
  shard-00003.rec            a finished shard (gzipped if asked)
  shard-00003.rec.json       its counts and mixing sums, written last
A shard takes its records from every unit, so the units' records stay until
every shard is written; their .json files stay until the commit.
Every file is written under `NAME.tmp-PID` and renamed when complete, so a
crash leaves only complete files and temporaries, which the next run of the
same job removes. The fingerprint in the name keys the directory to the
inputs, options and model.
"""

import contextlib
import glob
import io
import json
import os
import shutil
from typing import Iterable, Optional, Sequence, Tuple

from absl import logging
import numpy as np

from albert.pretraining_data import global_shuffle
from albert.pretraining_data.block_generator import Example
from official.io import atomic_write
from official.io.tfrecord import frame
from official.io.tfrecord import TFRecordWriter

INDEX_DTYPE = np.dtype(
    [
        ("shard", "<u4"),
        ("order", "<u8"),
        ("length", "<u4"),
        ("document", "<i8"),
        ("tokens", "<u4"),
    ]
)


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


def _save_npy_atomic(path: str, array: np.ndarray) -> None:
  buffer = io.BytesIO()
  np.save(buffer, array)
  atomic_write.write_atomic(path, buffer.getvalue())


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
    leftovers = glob.glob(os.path.join(glob.escape(self.path), "*.tmp-*"))
    if leftovers:
      # A killed run's workers may still be finishing their unit.
      atomic_write.wait_for_writers(leftovers)
    for tmp in glob.glob(os.path.join(glob.escape(self.path), "*.tmp-*")):
      with contextlib.suppress(FileNotFoundError):
        os.remove(tmp)

  def index(self, unit: Tuple[int, int]) -> str:
    return self.part(unit)[: -len(".rec")] + ".idx.npy"

  def bounds(self, unit: Tuple[int, int]) -> str:
    return self.part(unit)[: -len(".rec")] + ".bounds.npy"

  @property
  def pool(self) -> str:
    return os.path.join(self.path, "pool.npz")

  def pool_share(self, block: int) -> str:
    """A block's share of the pool (the documents format samples it with
    the block's documents)."""
    return os.path.join(self.path, f"pool-block-{block:06d}.npz")

  def unit_stats(self, unit: Tuple[int, int]) -> Optional[dict]:
    return _read_json(self.part(unit) + ".json")

  def shard_marker(self, shard: int) -> Optional[dict]:
    return _read_json(self.shard(shard) + ".json")

  def write_unit(
      self,
      unit: Tuple[int, int],
      examples: Iterable[Example],
      stats,
      num_shards: int,
  ) -> dict:
    """Writes a unit's records sorted by (shard, order) with their index.

    The records are framed into a temporary file as they come, then copied
    in sorted order one at a time, so memory holds the index only.
    `stats` is filled while the examples are drawn.
    """
    part = self.part(unit)
    unsorted = f"{part}.unsorted.tmp-{os.getpid()}"
    rows = []
    with open(unsorted, "wb") as f:
      for example in examples:
        framed = frame(example.record)
        f.write(framed)
        rows.append(
            (
                example.shard,
                example.order,
                len(framed),
                example.document,
                example.tokens,
            )
        )
    index = np.array(rows, dtype=INDEX_DTYPE)
    starts = np.zeros(len(index) + 1, dtype=np.int64)
    np.cumsum(index["length"], out=starts[1:])
    permutation = np.lexsort((index["order"], index["shard"]))
    with open(unsorted, "rb") as f, open(tmp_name(part), "wb") as out:
      fd = f.fileno()
      for i in permutation.tolist():
        out.write(os.pread(fd, int(starts[i + 1] - starts[i]), int(starts[i])))
    os.remove(unsorted)
    index = index[permutation]
    rows_of = np.searchsorted(index["shard"], np.arange(num_shards + 1))
    sorted_starts = np.zeros(len(index) + 1, dtype=np.int64)
    np.cumsum(index["length"], out=sorted_starts[1:])
    _save_npy_atomic(self.index(unit), index)
    _save_npy_atomic(
        self.bounds(unit), np.stack([rows_of, sorted_starts[rows_of]])
    )
    os.replace(tmp_name(part), part)
    result = stats.to_dict()
    write_json_atomic(part + ".json", result)
    return result

  def assemble_shard(
      self,
      shard: int,
      units: Sequence[Tuple[int, int]],
      num_shards: int,
      gzipped: bool,
      memory_bytes: int,
  ) -> dict:
    """Writes shard `shard`: its records of every unit, sorted by order.

    Written one order range ("part") at a time, each at most about
    `memory_bytes` of records, which gives the same bytes as one sort.
    Returns the shard's marker: counts and mixing sums.
    """
    sections = []  # (unit, first row, row cuts, byte cuts) per unit.
    total = 0
    for unit in units:
      rows, starts = np.load(self.bounds(unit))
      first, end = int(rows[shard]), int(rows[shard + 1])
      if end > first:
        sections.append((unit, first, end, int(starts[shard])))
        total += int(starts[shard + 1] - starts[shard])
    parts = global_shuffle.num_parts(total, memory_bytes)
    inner = np.array(
        global_shuffle.part_bounds(num_shards, parts)[1:-1], dtype=np.uint64
    )
    cuts = []
    for unit, first, end, byte0 in sections:
      index = np.load(self.index(unit), mmap_mode="r")[first:end]
      row_cuts = np.concatenate(
          [[0], np.searchsorted(index["order"], inner), [end - first]]
      ).astype(np.int64)
      byte_starts = np.zeros(end - first + 1, dtype=np.int64)
      np.cumsum(index["length"], out=byte_starts[1:])
      cuts.append((row_cuts, byte0 + byte_starts[row_cuts]))
    staged = self.shard(shard)
    shard_stats = global_shuffle.ShardStats()
    with open(tmp_name(staged), "wb") as raw:
      writer = TFRecordWriter(raw, gzipped)
      for p in range(parts):
        orders, records, documents, tokens = [], [], [], []
        for (unit, first, _, _), (row_cuts, byte_cuts) in zip(sections, cuts):
          a, b = int(row_cuts[p]), int(row_cuts[p + 1])
          if a == b:
            continue
          index = np.load(self.index(unit), mmap_mode="r")[
              first + a : first + b
          ]
          with open(self.part(unit), "rb") as f:
            f.seek(int(byte_cuts[p]))
            data = f.read(int(byte_cuts[p + 1] - byte_cuts[p]))
          bounds = np.zeros(b - a + 1, dtype=np.int64)
          np.cumsum(index["length"], out=bounds[1:])
          view = memoryview(data)
          records.extend(view[bounds[k] : bounds[k + 1]] for k in range(b - a))
          orders.append(np.array(index["order"]))
          documents.append(np.array(index["document"]))
          tokens.append(np.array(index["tokens"]))
        if not records:
          continue
        permutation = global_shuffle.shard_permutation(np.concatenate(orders))
        for k in permutation:
          writer.write_framed(records[k], 1)
        shard_stats.add(
            np.concatenate(documents)[permutation], np.concatenate(tokens)
        )
        del records
      writer.close()
      raw.flush()
      os.fsync(raw.fileno())
    os.replace(tmp_name(staged), staged)
    marker = dict(shard_stats.to_dict(), bytes=os.path.getsize(staged))
    write_json_atomic(staged + ".json", marker)
    return marker

  def remove_unit_records(self, units: Iterable[Tuple[int, int]]) -> None:
    """Drops the units' records and indexes (their stats stay)."""
    for unit in units:
      for path in (self.part(unit), self.index(unit), self.bounds(unit)):
        if os.path.exists(path):
          os.remove(path)

  def commit(
      self,
      paths: Sequence[str],
      manifest_path: str,
      manifest: dict,
      extra_files: Sequence[Tuple[str, str]] = (),
  ) -> None:
    """Moves the shards and any (staged, destination) extra files, then
    the manifest, into place; removes staging."""
    if os.path.exists(manifest_path):
      os.remove(manifest_path)  # No manifest while shards are replaced.
    for shard, path in enumerate(paths):
      if os.path.exists(self.shard(shard)):  # Else moved by an earlier try.
        move(self.shard(shard), path)
    for staged, destination in extra_files:
      if os.path.exists(staged):
        move(staged, destination)
    write_json_atomic(manifest_path, manifest)
    self.remove()

  def remove(self) -> None:
    shutil.rmtree(self.path, ignore_errors=True)
