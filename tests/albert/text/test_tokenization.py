"""Normalisation, the word-start rule and the SentencePiece wrapper."""

import pytest

from official.errors import InputError
from albert.text.tokenization import is_word_start_piece
from albert.text.tokenization import preprocess_text
from albert.text.tokenization import SentencePieceTokenizer


def test_preprocess_collapses_space_strips_accents_and_lowercases():
  assert (
      preprocess_text(
          "  Caf\u00e9 \t na\u00efve\u00a0 \u00c5NGSTR\u00d6M \n", lower=True
      )
      == "cafe naive angstrom"
  )
  assert preprocess_text(" Caf\u00e9  X ", lower=False) == "Cafe X"
  # NFKD compatibility forms: ligatures and superscripts are decomposed.
  assert preprocess_text("\ufb01ne x\u00b2", lower=True) == "fine x2"
  assert preprocess_text(" \t \u3000 ", lower=True) == ""


@pytest.mark.parametrize(
    "piece,start",
    [
        ("\u2581the", True),  # Space mark.
        ("\u2581", True),
        ("<unk>", True),  # Begins with "<".
        (",", True),  # Punctuation.
        ("'", True),  # Outside a-z and the punctuation set.
        ("'s", True),
        ("9", True),  # Digits are outside a-z.
        ("ing", False),  # Continuation.
        ("ex", False),  # "x" is a letter (the original once lacked it).
        ("Ing", False),  # Upper case counts as a letter.
        ("s.", False),  # Letters and punctuation: continuation.
        ("..", False),  # Several punctuation characters: not a start.
        ("\u00e9t\u00e9", True),  # Non-ASCII letters start a word.
        ("\u20ac", True),
    ],
)
def test_word_start_rule(piece, start):
  assert is_word_start_piece(piece) is start


def test_tokenizer_tables(tokenizer):
  assert (tokenizer.cls_id, tokenizer.sep_id, tokenizer.mask_id) == (2, 3, 4)
  assert len(tokenizer.is_word_start) == tokenizer.vocab_size
  for i in range(tokenizer.vocab_size):
    assert tokenizer.is_word_start[i] == is_word_start_piece(
        tokenizer.id_to_piece(i)
    )
  # Random replacements never draw <pad>, <unk> or control symbols.
  assert not set(tokenizer.replacement_ids.tolist()) & {0, 1, 2, 3, 4}
  assert len(tokenizer.replacement_ids) == tokenizer.vocab_size - 5


def test_digit_comma_pieces_are_split(tokenizer):
  ids = tokenizer.tokenize("It costs 1,000, or 2, or 30,")
  pieces = [tokenizer.id_to_piece(i) for i in ids]
  assert not any(
      len(p) > 1 and p[-1] == "," and p[-2].isdigit() for p in pieces
  ), pieces
  assert pieces.count(",") >= 3
  assert tokenizer.tokenize("   ") == []


def test_model_errors(tmp_path, corpus_path):
  with pytest.raises(InputError, match="cannot read SentencePiece model"):
    SentencePieceTokenizer.from_file(str(tmp_path / "missing.model"), True)
  bad = tmp_path / "bad.model"
  bad.write_bytes(b"not a model")
  with pytest.raises(InputError, match="not a valid SentencePiece model"):
    SentencePieceTokenizer.from_file(str(bad), True)


def test_model_without_control_symbols_is_refused(tmp_path, corpus_path):
  import sentencepiece as spm

  prefix = str(tmp_path / "plain")
  spm.SentencePieceTrainer.train(
      input=corpus_path,
      model_prefix=prefix,
      vocab_size=500,
      minloglevel=2,
      num_threads=1,
  )
  with pytest.raises(InputError, match=r"no \[CLS\] piece"):
    SentencePieceTokenizer.from_file(prefix + ".model", True)
