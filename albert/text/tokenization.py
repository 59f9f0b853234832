"""Text normalisation, SentencePiece encoding and the word-start rule.

Matches the original ALBERT release (docs/reference.md section 4): a line is
normalised (whitespace collapsed, NFKD, combining marks dropped, optionally
lower-cased), then split into SentencePiece pieces; a piece that ends in a
digit followed by a comma ("1,") is split into the digits and the comma, as
the original `encode_pieces` intends. Whole-word masking needs to know which
pieces start a word; the rule depends only on the piece string, so it is
evaluated once per vocabulary entry into a lookup table.
"""

import bisect
import re
import unicodedata
from typing import List, Sequence, Tuple

from absl import logging
import numpy as np
import sentencepiece as spm

from official.errors import InputError
from official.io import files

SPACE_MARK = (
    "\u2581"  # SentencePiece's "▁", marks a piece that follows a space.
)
CONTROL_PIECES = ("[CLS]", "[SEP]", "[MASK]")

# The original's punctuation set: ASCII punctuation without the apostrophe.
_PUNCTUATION = frozenset('!"#$%&()*+,-./:;?@[\\]^_`{|}~')
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz") | _PUNCTUATION
_DIGIT_COMMA = re.compile(r"\d,")


def _check_sentencepiece_version() -> None:
  """Warns if the library breaks Viterbi ties unlike tensorflow-text's."""
  version = tuple(int(v) for v in re.findall(r"\d+", spm.__version__)[:3])
  if version >= (0, 2, 2):
    logging.warning(
        "sentencepiece %s breaks segmentation ties (e.g. '000' as '0'+'00' or "
        "'00'+'0') unlike the tokenizer in tensorflow-text, so data written "
        "here and SavedModel preprocessing may differ; install "
        "sentencepiece<0.2.2 (requirements.txt)",
        spm.__version__,
    )


_check_sentencepiece_version()


def preprocess_text(line: str, lower: bool) -> str:
  """Normalises one line as the original does before SentencePiece.

  Whitespace runs collapse to one space and the ends are stripped; then NFKD
  and removal of combining marks (accents); then lower-casing if `lower`.
  An empty result marks a document boundary.
  """
  text = " ".join(line.split())
  if not text.isascii():  # NFKD and combining marks only touch non-ASCII.
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
  return text.lower() if lower else text


def is_word_start_piece(piece: str) -> bool:
  """The original's rule: does this SentencePiece piece start a word?

  True for a piece that begins with the space mark or with "<", a piece that
  is a single punctuation character, and a piece with any character outside
  a-z and punctuation (digits, apostrophes, accents, other scripts).
  """
  return (
      piece.startswith(SPACE_MARK)
      or piece.startswith("<")
      or piece in _PUNCTUATION
      or not all(c.lower() in _WORD_CHARS for c in piece)
  )


class SentencePieceTokenizer:
  """A SentencePiece model with ALBERT's special ids and lookup tables.

  Attributes:
    vocab_size: number of pieces.
    cls_id, sep_id, mask_id: ids of the control symbols.
    is_word_start: bool [vocab_size], `is_word_start_piece` of each piece.
    replacement_ids: int32 ids that random replacement may draw: every piece
      that is not a control, unknown or unused symbol.
  """

  kind = "sentencepiece"

  def __init__(self, model_proto: bytes, lower: bool, name: str = "model"):
    """Loads a serialized model; raises InputError if it is unusable."""
    self.lower = lower
    self._sp = spm.SentencePieceProcessor()
    try:
      self._sp.LoadFromSerializedProto(model_proto)
    except Exception as e:  # sentencepiece raises RuntimeError/OSError.
      raise InputError(
          f"{name} is not a valid SentencePiece model ({e}); train one with "
          "tools/train_sentencepiece.py"
      ) from None
    self.vocab_size = self._sp.get_piece_size()
    ids = {}
    for piece in CONTROL_PIECES:
      pid = self._sp.piece_to_id(piece)
      if pid == self._sp.unk_id() or self._sp.id_to_piece(pid) != piece:
        raise InputError(
            f"{name} has no {piece} piece; ALBERT needs [CLS], [SEP] and "
            "[MASK] as control symbols (tools/train_sentencepiece.py adds them)"
        )
      ids[piece] = pid
    self.cls_id, self.sep_id, self.mask_id = (ids[p] for p in CONTROL_PIECES)
    pieces = [self._sp.id_to_piece(i) for i in range(self.vocab_size)]
    self.is_word_start = np.array(
        [is_word_start_piece(p) for p in pieces], dtype=bool
    )
    self.replacement_ids = np.array(
        [
            i
            for i in range(self.vocab_size)
            if not (
                self._sp.is_control(i)
                or self._sp.is_unknown(i)
                or self._sp.is_unused(i)
            )
        ],
        dtype=np.int32,
    )
    if not self.replacement_ids.size:
      raise InputError(f"{name} has no ordinary pieces")

  @classmethod
  def from_file(cls, path: str, lower: bool) -> "SentencePieceTokenizer":
    proto = files.read_bytes(path, "SentencePiece model")
    return cls(proto, lower, name=f"SentencePiece model {path}")

  def id_to_piece(self, i: int) -> str:
    return self._sp.id_to_piece(int(i))

  def normalize(self, line: str) -> str:
    """What the original does to a corpus line first: `preprocess_text`."""
    return preprocess_text(line, self.lower)

  def encode_lines(self, lines: Sequence[str]) -> List[List[int]]:
    """Token ids of already normalised, non-empty lines (may be empty)."""
    ids = self._sp.encode(list(lines), out_type=int, num_threads=1)
    for k, line in enumerate(lines):
      if _DIGIT_COMMA.search(line):
        ids[k] = self._encode_with_digit_comma_split(line)
    return ids

  def _encode_with_digit_comma_split(self, line: str) -> List[int]:
    """The original's special case: "1," becomes "1" and "," pieces."""
    pieces = []
    for piece in self._sp.encode(line, out_type=str):
      if len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit():
        sub = self._sp.encode(piece[:-1].replace(SPACE_MARK, ""), out_type=str)
        # Re-encoding adds a leading space mark; keep it only if the piece
        # had one.
        if sub and piece[0] != SPACE_MARK and sub[0].startswith(SPACE_MARK):
          sub = sub[1:] if len(sub[0]) == 1 else [sub[0][1:]] + sub[1:]
        pieces.extend(sub)
        pieces.append(",")
      else:
        pieces.append(piece)
    return [self._sp.piece_to_id(p) for p in pieces]

  def tokenize(self, line: str) -> List[int]:
    """Normalises and encodes one raw line."""
    text = preprocess_text(line, self.lower)
    return self.encode_lines([text])[0] if text else []

  def piece_char_spans(
      self, word: str, ids: Sequence[int]
  ) -> List[Tuple[int, int]]:
    """Where each piece of `tokenize(word)` lies in `word`: (start, end)
    character offsets, end exclusive, for a word without whitespace.

    Each character of `word` is normalised on its own; when those lengths
    add up to the pieces' lengths (without the space mark), every character
    belongs to the piece that covers the start of its normalised text (a
    character that normalises to nothing, such as a combining mark, to the
    piece before it), so "Japan's" -> ▁japan ' s is (0, 5) (5, 6) (6, 7).
    Otherwise (an <unk> piece, a normalisation spanning characters such as
    `` -> "), and for a piece that owns no character, the whole word.
    `AlbertPreprocessor.piece_char_spans` computes the same in the graph.
    """
    whole = [(0, len(word))] * len(ids)
    lengths = [len(preprocess_text(c, self.lower)) for c in word]
    ends, total = [], 0
    for i in ids:
      total += len(self.id_to_piece(i).lstrip(SPACE_MARK))
      ends.append(total)
    if total != sum(lengths):
      return whole
    first, last = {}, {}
    position = 0
    for c, length in enumerate(lengths):
      # Doubled positions: a character of length 0 sits half a step back.
      owner = bisect.bisect_right(
          [2 * e for e in ends], 2 * position - (length == 0)
      )
      owner = min(owner, len(ids) - 1)
      first.setdefault(owner, c)
      last[owner] = c + 1
      position += length
    return [
        (first[k], last[k]) if k in first else whole[k] for k in range(len(ids))
    ]
