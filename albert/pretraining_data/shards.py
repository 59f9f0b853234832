"""Input files and output shard names.

Naming follows the original and Beam: `--output_file=a.tfrecord,b.tfrecord`
names every shard; a single name with N > 1 shards becomes
`stem-00000-of-0000N.ext`. Which example goes to which shard is
global_shuffle's business.
"""

import glob
import os
from typing import Iterator, List, Tuple

from official.errors import InputError


def expand_inputs(patterns: str) -> List[Tuple[str, int]]:
  """Comma-separated globs -> sorted, unique (path, size in bytes).

  Raises:
    InputError: no pattern given, a pattern matches no file, or every file
      is empty.
  """
  names = [p.strip() for p in patterns.split(",") if p.strip()]
  if not names:
    raise InputError(
        "no input: set --input_file to one or more files or "
        "globs, separated by commas"
    )
  files = {}
  for pattern in names:
    matches = [
        m for m in glob.glob(os.path.expanduser(pattern)) if os.path.isfile(m)
    ]
    if not matches:
      raise InputError(f"input {pattern} matches no file")
    for path in matches:
      files[os.path.abspath(path)] = os.path.getsize(path)
  ordered = sorted(files.items())
  if not sum(size for _, size in ordered):
    raise InputError(
        f"input {patterns} is empty: expected text, one "
        "sentence per line, a blank line between documents"
    )
  return ordered


def utf8_lines(path: str) -> Iterator[Tuple[int, int, str]]:
  """(line number, bytes, text) of every line of a UTF-8 file (a BOM on the
  first line dropped).

  Raises:
    InputError: a line that is not UTF-8 (file and line).
  """
  with open(path, "rb") as f:
    for number, raw in enumerate(f, start=1):
      try:
        line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
      except UnicodeDecodeError as e:
        raise InputError(
            f"{path}, line {number}: not valid UTF-8 "
            f"({e.reason}); convert the file to UTF-8"
        ) from None
      yield number, len(raw), line


def split_extension(path: str) -> Tuple[str, str]:
  """("out", ".tfrecord") for out.tfrecord; keeps ".tfrecord.gz" together."""
  root, ext = os.path.splitext(path)
  if ext == ".gz":
    root, inner = os.path.splitext(root)
    ext = inner + ext
  return root, ext


def numbered_names(name: str, num_shards: int) -> List[str]:
  """`name` for one shard, else stem-00000-of-0000N.ext (any scheme)."""
  if num_shards == 1:
    return [name]
  root, ext = split_extension(name)
  return [f"{root}-{i:05d}-of-{num_shards:05d}{ext}" for i in range(num_shards)]


def shard_paths(output_file: str, num_output_shards: int) -> List[str]:
  """The shard file names (absolute).

  Raises:
    InputError: no output, or a shard count that contradicts the list.
  """
  names = [p.strip() for p in output_file.split(",") if p.strip()]
  if not names:
    raise InputError("no output: set --output_file")
  if num_output_shards < 1:
    raise InputError(f"num_output_shards={num_output_shards} must be >= 1")
  if len(names) > 1:
    if num_output_shards not in (1, len(names)):
      raise InputError(
          f"--output_file names {len(names)} files but num_output_shards="
          f"{num_output_shards}; give one name or as many as shards"
      )
    return [os.path.abspath(n) for n in names]
  return numbered_names(os.path.abspath(names[0]), num_output_shards)
