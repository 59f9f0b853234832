"""WordPiece tokenization from a BERT-style `vocab.txt`, as the original ALBERT
does without `--spm_model_file` (its `tokenization.FullTokenizer`: the
`BasicTokenizer`, then the greedy longest-match `WordpieceTokenizer`; the
Chinese ALBERTs use it, docs/reference.md section 4).

Basic tokenization: drop NUL, U+FFFD and control characters, turn whitespace
into spaces, put spaces around every CJK ideograph (so each is a word of its
own), split on whitespace; with `lower`, lower-case and strip accents (NFD,
combining marks dropped); split every punctuation character off. WordPiece:
each word becomes the longest vocabulary entries from the left, a piece
after the first prefixed `##`; a word with no such split, or longer than 200
characters, is one `[UNK]`. A piece starts a word unless it begins with `##`
(the original's `_is_start_piece_bert`), so whole-word masking keeps
`play ##ing` together and takes each Chinese character alone.
"""

import unicodedata
from typing import List, Sequence, Tuple

import numpy as np

from official.errors import InputError
from official.io import files

UNK, CLS, SEP, MASK, PAD = "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[PAD]"
REQUIRED = (UNK, CLS, SEP, MASK)
CONTINUATION = "##"
MAX_WORD_CHARS = 200  # longer words are one [UNK], as in the original

# CJK Unified Ideographs and their extensions and compatibility blocks: the
# original's `_is_chinese_char` ranges (not Hangul, Hiragana or Katakana).
_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def is_cjk(char: str) -> bool:
  cp = ord(char)
  return any(lo <= cp <= hi for lo, hi in _CJK)


def _is_whitespace(char: str) -> bool:
  return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def _is_control(char: str) -> bool:
  if char in "\t\n\r":
    return False
  return unicodedata.category(char).startswith("C")


def _is_punctuation(char: str) -> bool:
  """ASCII symbols ($, ^, `, ...) count too, as in the original."""
  cp = ord(char)
  if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
    return True
  return unicodedata.category(char).startswith("P")


def _normalize(text: str, lower: bool) -> str:
  """Lower-case, then strip accents (NFD, combining marks dropped)."""
  if not lower:
    return text
  text = unicodedata.normalize("NFD", text.lower())
  return "".join(c for c in text if unicodedata.category(c) != "Mn")


def _words(text: str) -> List[Tuple[int, int]]:
  """(start, end) of the original's whitespace-separated words after its
  clean-up and CJK spacing; characters it drops are left out of no span but
  `_clean` skips them."""
  spans, start = [], None
  for offset, char in enumerate(text):
    if _is_whitespace(char) or is_cjk(char):
      if start is not None:
        spans.append((start, offset))
        start = None
      if is_cjk(char):
        spans.append((offset, offset + 1))
    elif start is None:
      start = offset
  if start is not None:
    spans.append((start, len(text)))
  return spans


def _clean(text: str) -> str:
  return "".join(
      c for c in text if not (ord(c) == 0 or ord(c) == 0xFFFD or _is_control(c))
  )


def basic_tokens(text: str, lower: bool) -> List[Tuple[str, int, int]]:
  """The original's basic tokens of `text`, each with where it lies in
  `text`: (token, start, end), end exclusive.

  A word is normalised whole (as the original: lower-casing is
  context-dependent for a few letters, e.g. the Greek final sigma), then
  split at punctuation; the offsets come from normalising its characters
  one by one, and where those do not add up to the token, the token covers
  its whole word.
  """
  tokens = []
  for start, end in _words(text):
    chars = [(c, i) for i, c in enumerate(text[start:end], start)]
    chars = [(c, i) for c, i in chars if _clean(c)]
    if not chars:
      continue
    normalized = _normalize("".join(c for c, _ in chars), lower)
    pieces = _split_punctuation(normalized)
    offsets = _char_offsets(chars, lower, pieces)
    if offsets is None:
      tokens.extend((p, start, end) for p in pieces)
    else:
      tokens.extend((p, a, b) for p, (a, b) in zip(pieces, offsets))
  return tokens


def _split_punctuation(word: str) -> List[str]:
  out, current = [], []
  for char in word:
    if _is_punctuation(char):
      if current:
        out.append("".join(current))
        current = []
      out.append(char)
    else:
      current.append(char)
  if current:
    out.append("".join(current))
  return out


def _char_offsets(chars, lower: bool, pieces: List[str]):
  """(start, end) in the text of each piece of a word, or None when the
  characters normalised one by one do not spell the pieces.

  Character c covers positions [at_c, at_c + len_c) of the normalised word;
  a piece gets every character its positions touch (one character's
  decomposition can feed two pieces, e.g. a Hangul syllable's jamo), and a
  character that normalises to nothing (a combining mark) goes with the
  piece before it.
  """
  spelled = [(_normalize(c, lower), i) for c, i in chars]
  if "".join(n for n, _ in spelled) != "".join(pieces):
    return None
  starts, at = [], 0
  for norm, _ in spelled:
    starts.append(at)
    at += len(norm)
  offsets, begin = [], 0
  for piece in pieces:
    end = begin + len(piece)
    touched = [
        k
        for k, (norm, _) in enumerate(spelled)
        if starts[k] < end and starts[k] + len(norm) > begin
    ]
    last = touched[-1]
    while last + 1 < len(spelled) and not spelled[last + 1][0]:
      last += 1  # marks after the piece's last character
    offsets.append((spelled[touched[0]][1], spelled[last][1] + 1))
    begin = end
  return offsets


class WordPieceTokenizer:
  """A `vocab.txt` with ALBERT's special tokens and lookup tables; the same
  interface as `SentencePieceTokenizer`.

  Attributes:
    kind: "wordpiece".
    vocab_size: number of entries.
    cls_id, sep_id, mask_id, unk_id: ids of the special tokens.
    is_word_start: bool [vocab_size]: the entry does not begin with `##`.
    replacement_ids: int32 ids that random replacement may draw: every entry
      but the bracketed special ones ([PAD], [UNK], [CLS], [SEP], [MASK],
      [unused0], ...), which the original draws too (a known defect).
  """

  kind = "wordpiece"

  def __init__(self, vocab: bytes, lower: bool, name: str = "vocab.txt"):
    """Reads a vocabulary file's bytes; raises InputError if unusable."""
    self.lower = lower
    try:
      text = vocab.decode("utf-8")
    except UnicodeDecodeError as e:
      raise InputError(
          f"{name} is not UTF-8 text ({e.reason} at byte {e.start}); give a "
          "BERT-style vocab.txt, one token per line"
      ) from None
    self._pieces = [line.strip() for line in text.splitlines()]
    while self._pieces and not self._pieces[-1]:
      self._pieces.pop()
    self._ids = {}
    for i, piece in enumerate(self._pieces):
      if not piece or piece in self._ids:
        what = "an empty line" if not piece else f"{piece!r} again"
        raise InputError(
            f"{name} line {i + 1} is {what}; a vocab.txt holds each token "
            "once, one per line"
        )
      self._ids[piece] = i
    missing = [t for t in REQUIRED if t not in self._ids]
    if missing:
      raise InputError(
          f"{name} has no {', '.join(missing)}; ALBERT needs "
          f"{', '.join(REQUIRED)} in the vocabulary (tools/train_wordpiece.py "
          "adds them)"
      )
    self.vocab_size = len(self._pieces)
    self.unk_id, self.cls_id, self.sep_id, self.mask_id = (
        self._ids[t] for t in REQUIRED
    )
    self.is_word_start = np.array(
        [not p.startswith(CONTINUATION) for p in self._pieces], dtype=bool
    )
    self.replacement_ids = np.array(
        [
            i
            for i, p in enumerate(self._pieces)
            if not (p.startswith("[") and p.endswith("]"))
        ],
        dtype=np.int32,
    )
    if not self.replacement_ids.size:
      raise InputError(f"{name} has no ordinary tokens")

  @classmethod
  def from_file(cls, path: str, lower: bool) -> "WordPieceTokenizer":
    data = files.read_bytes(path, "vocabulary")
    return cls(data, lower, name=f"vocabulary {path}")

  @property
  def pieces(self) -> List[str]:
    return list(self._pieces)

  def id_to_piece(self, i: int) -> str:
    return self._pieces[int(i)]

  def piece_to_id(self, piece: str) -> int:
    return self._ids.get(piece, self.unk_id)

  def normalize(self, line: str) -> str:
    """What the original does to a corpus line before tokenizing: strip."""
    return line.strip()

  def word_pieces(self, word: str) -> List[int]:
    """The greedy longest-match-first pieces of one basic token."""
    if len(word) > MAX_WORD_CHARS:
      return [self.unk_id]
    ids, start = [], 0
    while start < len(word):
      end = len(word)
      found = None
      while start < end:
        piece = word[start:end]
        if start > 0:
          piece = CONTINUATION + piece
        found = self._ids.get(piece)
        if found is not None:
          break
        end -= 1
      if found is None:
        return [self.unk_id]
      ids.append(found)
      start = end
    return ids

  def encode_lines(self, lines: Sequence[str]) -> List[List[int]]:
    """Token ids of normalised lines."""
    return [self.tokenize(line) for line in lines]

  def tokenize(self, line: str) -> List[int]:
    """Basic tokenization, then WordPiece: the original's `FullTokenizer`."""
    ids = []
    for token, _, _ in basic_tokens(line, self.lower):
      ids.extend(self.word_pieces(token))
    return ids

  def piece_char_spans(
      self, word: str, ids: Sequence[int]
  ) -> List[Tuple[int, int]]:
    """Where each piece of `tokenize(word)` lies in `word`: (start, end)
    character offsets, end exclusive.

    A basic token's pieces share out its characters by their lengths
    (without `##`); an `[UNK]` covers its whole basic token, and pieces
    that are not `tokenize(word)` the whole word.
    """
    spans, found = [], []
    for token, start, end in basic_tokens(word, self.lower):
      pieces = self.word_pieces(token)
      found.extend(pieces)
      chars = [(c, i) for i, c in enumerate(word[start:end], start)]
      texts = [self.id_to_piece(i).removeprefix(CONTINUATION) for i in pieces]
      offsets = None
      if pieces != [self.unk_id]:
        offsets = _char_offsets(chars, self.lower, texts)
      spans.extend(offsets or [(start, end)] * len(pieces))
    if found != list(ids):
      return [(0, len(word))] * len(ids)
    return spans
