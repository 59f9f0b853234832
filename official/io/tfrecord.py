"""`TFRecordWriter`: TFRecord files without TensorFlow.

A record is: length (uint64 little-endian), masked crc32c of those 8 bytes,
the data, masked crc32c of the data; masked(c) = ((c >> 15) | (c << 17)) +
0xa282ead8 mod 2**32. A gzip file (TensorFlow's "GZIP" compression) is one
gzip stream of those records; its header carries no name and no time, so
equal records give equal bytes.
"""

import gzip
import struct
from typing import BinaryIO, Callable, Iterable, Iterator, Optional

import google_crc32c

_MASK_DELTA = 0xA282EAD8
GZIP_SUFFIX = ".gz"


def masked_crc32c(data: bytes) -> int:
  crc = google_crc32c.value(data)
  return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
  """One record's bytes: header, data, footer."""
  length = struct.pack("<Q", len(data))
  return b"".join(
      (
          length,
          struct.pack("<I", masked_crc32c(length)),
          data,
          struct.pack("<I", masked_crc32c(data)),
      )
  )


def read_frames(f: BinaryIO) -> Iterator[bytes]:
  """Yields the data of each record of an uncompressed stream, checking crcs."""
  while True:
    header = f.read(12)
    if not header:
      return
    if len(header) < 12:
      raise ValueError("truncated TFRecord header")
    length, length_crc = struct.unpack("<QI", header)
    if masked_crc32c(header[:8]) != length_crc:
      raise ValueError("corrupt TFRecord length")
    data = f.read(length)
    footer = f.read(4)
    if len(data) < length or len(footer) < 4:
      raise ValueError("truncated TFRecord")
    if masked_crc32c(data) != struct.unpack("<I", footer)[0]:
      raise ValueError("corrupt TFRecord data")
    yield data


def is_gzip(
    path: str, opener: Optional[Callable[[str], BinaryIO]] = None
) -> bool:
  """Whether the file starts with the gzip magic bytes, whatever its name.

  `opener` maps a path to a binary file object (default: local `open`).
  """
  with (opener or (lambda p: open(p, "rb")))(path) as f:
    return f.read(2) == b"\x1f\x8b"


class TFRecordWriter:
  """Writes framed records to a binary file object, optionally gzipped.

  The writer does not own `fileobj`; `close()` finishes the gzip stream.
  """

  def __init__(self, fileobj: BinaryIO, gzipped: bool = False):
    self._raw = fileobj
    self._out = (
        gzip.GzipFile(filename="", mode="wb", fileobj=fileobj, mtime=0)
        if gzipped
        else fileobj
    )
    self.num_records = 0

  def write(self, data: bytes) -> None:
    self._out.write(frame(data))
    self.num_records += 1

  def write_all(self, records: Iterable[bytes]) -> None:
    for data in records:
      self.write(data)

  def write_framed(self, chunk: bytes, num_records: int) -> None:
    """Appends bytes that already hold `num_records` framed records."""
    self._out.write(chunk)
    self.num_records += num_records

  def close(self) -> None:
    if self._out is not self._raw:
      self._out.close()

  def __enter__(self):
    return self

  def __exit__(self, *exc):
    self.close()
