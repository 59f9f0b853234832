"""Byte-range blocks read every document exactly once, whatever their size."""

import re

import pytest

from albert.pretraining_data import corpus_reader
from official.errors import InputError

TEXT = (
    "\n\n  \nFirst doc, line one.\nLine two.\r\n\n"
    "Second doc.\n \t \n\n\nThird doc has\nthree\nlines.\n\n"
    "\u00c9t\u00e9 fourth.\n\u3000\n"  # An ideographic space line is blank.
    + "".join(
        f"Doc {i} sentence a.\nDoc {i} sentence b.\n\n" for i in range(20)
    )
    + "Last doc without a final newline."
)


def _reference_documents(text):
  """The original's reading: blank (whitespace-only) lines end documents."""
  docs, doc = [], []
  for line in re.split(r"(?<=\n)", text):
    if line.strip():
      doc.append(line)
    elif doc:
      docs.append(doc)
      doc = []
  if doc:
    docs.append(doc)
  return docs


def _read_all(path, size, block_bytes, max_document_bytes=1 << 30):
  docs = []
  for block in corpus_reader.plan_blocks([(path, size)], block_bytes):
    docs.extend(corpus_reader.read_documents(block, max_document_bytes))
  return docs


@pytest.mark.parametrize("block_bytes", [1, 2, 3, 7, 16, 50, 333, 1 << 20])
def test_blocks_partition_the_documents(tmp_path, block_bytes):
  path = tmp_path / "c.txt"
  data = TEXT.encode("utf-8")
  path.write_bytes(data)
  expected = _reference_documents(TEXT)
  assert len(expected) == 25
  assert _read_all(str(path), len(data), block_bytes) == expected


def test_plan_covers_each_file_once():
  blocks = corpus_reader.plan_blocks([("a", 10), ("empty", 0), ("b", 3)], 4)
  assert [(b.index, b.path, b.start, b.end) for b in blocks] == [
      (0, "a", 0, 3),
      (1, "a", 3, 6),
      (2, "a", 6, 10),
      (3, "b", 0, 3),
  ]


def test_long_documents_are_cut_not_lost(tmp_path):
  lines = [
      f"sentence number {i} of a very long document.\n" for i in range(200)
  ]
  text = "".join(lines) + "\nshort one.\n"
  path = tmp_path / "long.txt"
  path.write_text(text, encoding="utf-8")
  for block_bytes in (100, 1000, 1 << 20):
    docs = _read_all(str(path), len(text), block_bytes, max_document_bytes=1000)
    assert [l for d in docs for l in d] == lines + ["short one.\n"]
    assert max(sum(len(l) for l in d) for d in docs) < 1100


def test_bad_utf8_names_file_and_line(tmp_path):
  path = tmp_path / "bad.txt"
  path.write_bytes(b"ok one.\nok two.\n\nthird \xff line.\n")
  with pytest.raises(InputError, match=r"bad\.txt, line 4: not valid UTF-8"):
    _read_all(str(path), path.stat().st_size, 1 << 20)
  # The block that owns the line reports it, wherever the cut falls.
  with pytest.raises(InputError, match="line 4"):
    _read_all(str(path), path.stat().st_size, 5)


def test_byte_order_mark_is_dropped(tmp_path):
  path = tmp_path / "bom.txt"
  path.write_bytes("\ufeffHello there.\n".encode("utf-8"))
  assert _read_all(str(path), path.stat().st_size, 1 << 20) == [
      ["Hello there.\n"]
  ]


@pytest.mark.parametrize(
    "block_bytes,max_document_bytes",
    [(8 << 10, 8 << 10), (3000, 8 << 10), (8 << 10, 3000), (61, 200)],
)
def test_a_corpus_without_blank_lines_is_spread_over_the_blocks(
    tmp_path, block_bytes, max_document_bytes
):
  """One endless document: every block reads about its own share (memory
  stays bounded, the work stays parallel) and every line exactly once."""
  lines = [
      f"line {i} of a corpus that never has a blank line.\n"
      for i in range(2000)
  ]
  lines[700] = "a line \u00e9 longer than a block " * 20 + "\n"
  text = "".join(lines)
  path = tmp_path / "noblank.txt"
  path.write_text(text, encoding="utf-8")
  size = path.stat().st_size
  blocks = corpus_reader.plan_blocks([(str(path), size)], block_bytes)
  per_block = [
      list(corpus_reader.read_documents(b, max_document_bytes)) for b in blocks
  ]
  assert [l for docs in per_block for d in docs for l in d] == lines
  longest = max(len(l.encode()) for l in lines)
  for block, docs in zip(blocks, per_block):
    read = sum(len(l.encode()) for d in docs for l in d)
    assert (
        read
        <= (block.end - block.start)
        + max_document_bytes
        + block_bytes
        + 2 * longest
    )
    for d in docs:  # parts of at most max_document_bytes (+ one line)
      assert sum(len(l.encode()) for l in d) < max_document_bytes + longest
  assert sum(bool(docs) for docs in per_block) >= len(blocks) // 3


def test_lines_no_sentence_fills_are_warned_about_once_per_block(
    tmp_path, caplog
):
  long_line = "word " * 30_000  # 150 kB: a whole book on one line
  text = f"A sentence.\n{long_line}\n{long_line}\n\nShort doc.\n"
  path = tmp_path / "corpus.txt"
  path.write_text(text)
  with caplog.at_level("WARNING", logger="absl"):
    docs = _read_all(str(path), len(text), block_bytes=1 << 20)
  assert [len(d) for d in docs] == [3, 1]  # read as they are, not dropped
  warnings = [
      r.getMessage() for r in caplog.records if "bytes" in r.getMessage()
  ]
  assert len(warnings) == 1, warnings
  assert f"{path}, byte 12: a line of 150,001 bytes" in warnings[0]
  assert "(and 1 more in this block)" in warnings[0]
  assert "one sentence per line" in warnings[0]
