"""One tokenizer interface, two implementations: SentencePiece (`.model`, the
English ALBERTs) and WordPiece (`vocab.txt`, the Chinese ones), chosen as the
original chooses: a SentencePiece model when given, else the vocabulary.

Both tokenizers offer:
  kind, lower, vocab_size, cls_id, sep_id, mask_id
  is_word_start     bool [vocab_size]: the piece starts a word
  replacement_ids   ids random replacement may draw
  normalize(line)   what the original does to a corpus line first
  encode_lines(normalised lines) / tokenize(raw text) -> ids
  id_to_piece(id), piece_char_spans(word, ids)

`TokenizerFile` is the file's bytes, which worker processes and Beam
transforms rebuild the tokenizer from.
"""

import dataclasses
import hashlib
from typing import Callable, Optional, Union

from albert.text.tokenization import SentencePieceTokenizer
from albert.text.wordpiece import WordPieceTokenizer
from official.errors import InputError
from official.io import files

Tokenizer = Union[SentencePieceTokenizer, WordPieceTokenizer]
SENTENCEPIECE, WORDPIECE = "sentencepiece", "wordpiece"


@dataclasses.dataclass(frozen=True)
class TokenizerFile:
  """A tokenizer's file: its kind, path and bytes."""

  kind: str
  path: str
  data: bytes = dataclasses.field(repr=False)

  @property
  def sha256(self) -> str:
    return hashlib.sha256(self.data).hexdigest()

  @property
  def what(self) -> str:
    return (
        f"SentencePiece model {self.path}"
        if self.kind == SENTENCEPIECE
        else f"vocabulary {self.path}"
    )

  def build(self, lower: bool) -> Tokenizer:
    cls = (
        SentencePieceTokenizer
        if self.kind == SENTENCEPIECE
        else (WordPieceTokenizer)
    )
    return cls(self.data, lower, name=self.what)

  def describe(self, tokenizer: Tokenizer) -> dict:
    """What a manifest records of it."""
    return {
        "kind": self.kind,
        "path": self.path,
        "sha256": self.sha256,
        "vocab_size": tokenizer.vocab_size,
    }


def choose(spm_model_file: Optional[str], vocab_file: Optional[str]) -> str:
  """The kind the flags select: the SentencePiece model, else the vocabulary
  (with both, the vocabulary must be the model's own `.vocab` listing, as
  the original's commands pass them).

  Raises:
    InputError: neither is given.
  """
  if spm_model_file:
    return SENTENCEPIECE
  if vocab_file:
    return WORDPIECE
  raise InputError(
      "give --spm_model_file (a SentencePiece model) or --vocab_file (a "
      "WordPiece vocab.txt, e.g. of the Chinese ALBERTs)"
  )


def read_file(
    spm_model_file: Optional[str] = None,
    vocab_file: Optional[str] = None,
    *,
    opener: Optional[Callable] = None,
) -> TokenizerFile:
  """The tokenizer file the flags name (read through `official.io.files`,
  or `opener`: e.g. Beam's file systems).

  With both given, the SentencePiece model is used and the vocabulary only
  names its pieces, as in the original.
  """
  kind = choose(spm_model_file, vocab_file)
  path = spm_model_file if kind == SENTENCEPIECE else vocab_file
  found = TokenizerFile(kind, path, _read(path, kind, opener))
  if kind == SENTENCEPIECE and vocab_file:
    _check_listing(found, vocab_file, _read(vocab_file, WORDPIECE, opener))
  return found


def _read(path: str, kind: str, opener) -> bytes:
  what = "SentencePiece model" if kind == SENTENCEPIECE else "vocabulary"
  if opener is None:
    return files.read_bytes(path, what)
  try:
    with opener(path, "rb") as f:
      return f.read()
  except OSError as e:
    raise InputError(
        f"cannot read {what} {path}: {getattr(e, 'strerror', None) or e}"
    ) from None


def _check_listing(model: TokenizerFile, path: str, data: bytes) -> None:
  """--vocab_file beside --spm_model_file must list the model's pieces (its
  `.vocab`, `piece<TAB>score` per line): anything else is ambiguous."""
  pieces = [
      line.split("\t")[0]
      for line in data.decode("utf-8", errors="replace").splitlines()
  ]
  tokenizer = model.build(lower=True)
  if pieces != [tokenizer.id_to_piece(i) for i in range(tokenizer.vocab_size)]:
    raise InputError(
        f"--vocab_file={path} is not the vocabulary of --spm_model_file="
        f"{model.path}; give --spm_model_file alone (SentencePiece) or "
        "--vocab_file alone (WordPiece)"
    )


def load(
    spm_model_file: Optional[str] = None,
    vocab_file: Optional[str] = None,
    *,
    lower: bool = True,
) -> Tokenizer:
  """The tokenizer of --spm_model_file or --vocab_file."""
  return read_file(spm_model_file, vocab_file).build(lower)
