"""The corpus as byte-range blocks, each read back as whole documents.

Input format (the original's): UTF-8 text, one sentence per line, a blank
(whitespace-only) line between documents. Every file is cut into blocks of
about `block_bytes` at fixed byte offsets, without reading it. A document
belongs to the block that holds the first byte of its first line, so a block
can be read on its own (seek, skip the tail of a document that began earlier,
read documents until one starts past the block's end) and every document is
read by exactly one block. The plan depends only on the file sizes and
`block_bytes`, never on how many processes run.

A file's end always ends a document. A document longer than
`max_document_bytes` is cut at a line boundary into parts of about that size.
A block boundary cuts a document too when the document began more than
`max_document_bytes` before it (`_is_cut`, decided from the bytes just
before the boundary, so both neighbouring blocks agree): the earlier block
stops there and the later one starts a new document. So no block reads more
than about its own size plus `max_document_bytes` and one block, even in a
corpus without blank lines; documents of ordinary length are never cut.
"""

import dataclasses
from typing import BinaryIO, Callable, Iterator, List, Optional, Sequence, Tuple

from absl import logging

from official.errors import InputError

Opener = Callable[[str], BinaryIO]
_ASCII_WHITESPACE = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
_SCAN_BYTES = 1 << 16
# Longer lines are warned about: no sentence is this long, so the file is
# probably not one sentence per line.
LONG_LINE_BYTES = 100_000


@dataclasses.dataclass(frozen=True)
class Block:
  """Bytes [start, end) of one input file; `index` is its global position.

  `file_size` and `block_bytes` give the file's other blocks (where a
  document read past `end` may be cut).
  """

  index: int
  path: str
  start: int
  end: int
  file_size: int
  block_bytes: int


def plan_blocks(
    files: Sequence[Tuple[str, int]], block_bytes: int
) -> List[Block]:
  """Cuts (path, size) files, in order, into blocks of at most ~block_bytes."""
  blocks = []
  for path, size in files:
    if size <= 0:
      continue
    bounds = _bounds(size, block_bytes)
    for start, end in zip(bounds[:-1], bounds[1:]):
      blocks.append(Block(len(blocks), path, start, end, size, block_bytes))
  return blocks


def _bounds(size: int, block_bytes: int) -> List[int]:
  """0, the block starts and `size`: equal cuts of at most ~block_bytes."""
  count = -(-size // block_bytes)
  return [size * j // count for j in range(count + 1)]


def _open_local(path: str) -> BinaryIO:
  return open(path, "rb")


def _line_number(f: BinaryIO, offset: int) -> int:
  """1-based number of the line that starts at byte `offset`."""
  f.seek(0)
  count, done = 1, 0
  while done < offset:
    chunk = f.read(min(_SCAN_BYTES, offset - done))
    if not chunk:
      break
    count += chunk.count(b"\n")
    done += len(chunk)
  return count


def _previous_line_is_blank(f: BinaryIO, line_start: int) -> bool:
  """Whether the line that ends just before `line_start` is whitespace-only."""
  tail = b""
  end = line_start - 1  # Byte line_start - 1 is that line's "\n".
  while end > 0:
    begin = max(0, end - _SCAN_BYTES)
    f.seek(begin)
    chunk = f.read(end - begin)
    newline = chunk.rfind(b"\n")
    part = chunk[newline + 1 :] if newline >= 0 else chunk
    if part.translate(None, _ASCII_WHITESPACE + bytes(range(128, 256))):
      return False  # An ASCII non-space character: certainly not blank.
    tail = part + tail
    if newline >= 0:
      break
    end = begin
  return not tail.decode("utf-8", errors="replace").strip()


def _is_cut(f: BinaryIO, line_start: int, max_document_bytes: int) -> bool:
  """Whether a block boundary whose first line starts at `line_start` cuts the
  document running through it: no file start and no blank line among the
  `max_document_bytes` + 1 bytes before it. Moves the file position."""
  begin = line_start - max_document_bytes - 1
  if begin <= 0:
    return False
  # Most boundaries have a blank line close by: look there first.
  for start in (max(begin, line_start - _SCAN_BYTES), begin):
    f.seek(start)
    lines = f.read(line_start - start).split(b"\n")
    # lines[0] may be the tail of a longer line; the last is empty (the cut
    # is at a line start).
    if any(
        not line.decode("utf-8", errors="replace").strip()
        for line in lines[1:-1]
    ):
      return False
    if start == begin:
      break
  return True


def _boundaries_after(block: Block) -> Iterator[int]:
  """The block starts of `block`'s file from `block.end` on (as the plan)."""
  size = block.file_size
  count = -(-size // block.block_bytes)
  j = block.end * count // size
  while j < count:
    bound = size * j // count
    if bound >= block.end:
      yield bound
    j += 1


def _decode(raw: bytes, f: BinaryIO, path: str, offset: int) -> str:
  try:
    return raw.decode("utf-8-sig" if offset == 0 else "utf-8")
  except UnicodeDecodeError as e:
    line = _line_number(f, offset)
    raise InputError(
        f"{path}, line {line}: not valid UTF-8 ({e.reason} at byte "
        f"{e.start} of the line); convert the file to UTF-8"
    ) from None


def _warn_long_lines(path: str, found: List[Tuple[int, int]]) -> None:
  """One warning per block for its lines over LONG_LINE_BYTES."""
  offset, size = found[0]
  more = f" (and {len(found) - 1} more in this block)" if len(found) > 1 else ""
  logging.warning(
      "%s, byte %s: a line of %s bytes%s; the corpus holds one sentence per "
      "line, so each is read as a single sentence: one example, cut to "
      "max_seq_length tokens. Split the text into sentences",
      path,
      f"{offset:,}",
      f"{size:,}",
      more,
  )


def read_documents(
    block: Block, max_document_bytes: int, opener: Optional[Opener] = None
) -> Iterator[List[str]]:
  """Yields the documents of `block` as lists of raw lines (with newlines).

  Args:
    block: the byte range to read.
    max_document_bytes: longer documents are cut into parts of this size.
    opener: path -> binary file object with seek (default: local `open`).

  Raises:
    InputError: a line is not valid UTF-8 (names the file and the line).
  """
  with (opener or _open_local)(block.path) as f:
    offset = 0
    skipping = False  # Inside a document that began in an earlier block.
    if block.start > 0:
      f.seek(block.start - 1)
      offset = block.start - 1 + len(f.readline())
      skipping = not _previous_line_is_blank(f, offset) and not _is_cut(
          f, offset, max_document_bytes
      )
      f.seek(offset)
    long_lines = []  # (offset, bytes) of lines no sentence would fill
    later = _boundaries_after(block)  # Met only by a document read past end.
    next_bound = next(later, None)
    doc, doc_bytes, in_doc = [], 0, False
    while True:
      raw = f.readline()
      if not raw:
        break
      line_start, offset = offset, offset + len(raw)
      if line_start >= block.end and not in_doc:
        break  # What follows belongs to the next blocks.
      if next_bound is not None and line_start >= next_bound:
        # The first line of one or more later blocks (a long line can span
        # several): they all start here, so one answer serves them all.
        if _is_cut(f, line_start, max_document_bytes):
          break  # The block that starts here starts a new document.
        f.seek(offset)
        while next_bound is not None and line_start >= next_bound:
          next_bound = next(later, None)
      text = _decode(raw, f, block.path, line_start)
      if len(raw) > LONG_LINE_BYTES:
        long_lines.append((line_start, len(raw)))
      if not text.strip():  # A blank line ends a document.
        skipping = in_doc = False
        if doc:
          yield doc
          doc, doc_bytes = [], 0
        continue
      if skipping:
        continue
      in_doc = True
      doc.append(text)
      doc_bytes += len(raw)
      if doc_bytes >= max_document_bytes:  # Cut; the rest is a new document.
        yield doc
        doc, doc_bytes = [], 0
    if doc:
      yield doc
    if long_lines:
      _warn_long_lines(block.path, long_lines)
