"""WordPiece tokenization (albert/text/wordpiece.py) against the original's
`FullTokenizer` and transformers' `BertTokenizer`, on a mixed text.

tests/testdata/wordpiece/: text.txt (Chinese, English, punctuation,
accents, Greek, Japanese, Korean, control characters, odd whitespace),
vocab.txt and reference.json, the pieces the original's own tokenizer gave
(tests/testdata/make_wordpiece_reference.py).
"""

import json
import os

import pytest
import transformers

from albert.text import wordpiece
from official.errors import InputError
from tests import helpers

DATA = os.path.join(helpers.REPO, "tests", "testdata", "wordpiece")
VOCAB = os.path.join(DATA, "vocab.txt")
with open(os.path.join(DATA, "text.txt"), encoding="utf-8") as _f:
  LINES = _f.read().replace("\\x00", "\x00").splitlines()
with open(os.path.join(DATA, "reference.json"), encoding="utf-8") as _f:
  REFERENCE = json.load(_f)


def _pieces(tokenizer, line):
  return [tokenizer.id_to_piece(i) for i in tokenizer.tokenize(line)]


@pytest.mark.parametrize("lower", [True, False])
def test_every_line_gives_the_originals_pieces(lower):
  tokenizer = wordpiece.WordPieceTokenizer.from_file(VOCAB, lower)
  expected = REFERENCE[str(lower).lower()]
  assert len(expected) == len(LINES) == 8
  for line, pieces in zip(LINES, expected):
    assert _pieces(tokenizer, line) == pieces, line
  assert any("[UNK]" in p for p in expected)  # the text exercises [UNK]
  assert any(q.startswith("##") for p in expected for q in p)


@pytest.mark.parametrize("lower", [True, False])
def test_every_line_gives_transformers_pieces(lower):
  ours = wordpiece.WordPieceTokenizer.from_file(VOCAB, lower)
  theirs = transformers.BertTokenizer(VOCAB, do_lower_case=lower)
  for line in LINES:
    a, b = _pieces(ours, line), theirs.tokenize(line)
    if lower and "ΟΔΟΣ" in line:
      # Python's str.lower (the original's) writes a word-final capital
      # sigma as ς; transformers 5 lower-cases letter by letter (σ), so
      # its "οδοσ" is not in the vocabulary. Everything else agrees.
      assert [(x, y) for x, y in zip(a, b) if x != y] == [("οδος", "[UNK]")]
    else:
      assert a == b, line


def test_word_starts_and_replacements():
  tokenizer = wordpiece.WordPieceTokenizer.from_file(VOCAB, True)
  pieces = tokenizer.pieces
  for i, piece in enumerate(pieces):
    assert tokenizer.is_word_start[i] == (not piece.startswith("##"))
  drawn = {pieces[i] for i in tokenizer.replacement_ids}
  assert not {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]"} & drawn
  assert len(drawn) == len(pieces) - 6
  assert (tokenizer.cls_id, tokenizer.sep_id, tokenizer.mask_id) == (2, 3, 4)


@pytest.mark.parametrize("lower", [True, False])
def test_piece_spans_spell_the_pieces(lower):
  tokenizer = wordpiece.WordPieceTokenizer.from_file(VOCAB, lower)
  checked = 0
  for line in LINES:
    for word in line.split():
      ids = tokenizer.tokenize(word)
      spans = tokenizer.piece_char_spans(word, ids)
      assert len(spans) == len(ids)
      basic = {(s, e) for _, s, e in wordpiece.basic_tokens(word, lower)}
      for i, (start, end) in zip(ids, spans):
        piece = tokenizer.id_to_piece(i)
        if piece == "[UNK]":  # the whole basic token
          assert (start, end) in basic
          continue
        text = wordpiece._normalize(wordpiece._clean(word[start:end]), lower)
        assert piece.removeprefix("##") in text, (word, piece, start, end)
        checked += 1
  assert checked > 100
  # Accents are dropped from the pieces but belong to their characters.
  ids = tokenizer.tokenize("résumé")
  assert tokenizer.piece_char_spans("résumé", ids)[0] == (0, 6)


@pytest.mark.parametrize(
    "text,message",
    [
        ("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n", "has no [MASK]"),
        ("[UNK]\n[CLS]\n[SEP]\n[MASK]\nhi\nhi\n", "line 6 is 'hi' again"),
        ("[UNK]\n[CLS]\n\n[SEP]\n[MASK]\n", "line 3 is an empty line"),
        (b"[UNK]\n\xff\xfe\n", "is not UTF-8 text"),
    ],
)
def test_bad_vocabularies_are_one_line(tmp_path, text, message):
  path = tmp_path / "vocab.txt"
  if isinstance(text, bytes):
    path.write_bytes(text)
  else:
    path.write_text(text, encoding="utf-8")
  with pytest.raises(InputError) as raised:
    wordpiece.WordPieceTokenizer.from_file(str(path), True)
  assert message in str(raised.value) and "\n" not in str(raised.value)
  assert str(path) in str(raised.value)
