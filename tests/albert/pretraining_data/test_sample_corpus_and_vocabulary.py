"""tools/make_sample_corpus.py and tools/train_sentencepiece.py."""

import pathlib

import pytest
import sentencepiece as spm

from albert.pretraining_data import sample_corpus
from official.errors import InputError
from albert.pretraining_data.sentencepiece_trainer import sample_sentences
from albert.pretraining_data.sentencepiece_trainer import train_sentencepiece
from tests import helpers

REPO = pathlib.Path(helpers.REPO)


def test_sample_corpus_is_real_text_in_the_bert_format(corpus_path):
  text = pathlib.Path(corpus_path).read_text(encoding="utf-8")
  assert 300_000 < len(text.encode()) <= 400_000
  documents = text.split("\n\n")
  assert documents[-1] == ""  # Ends with a blank line after the last one.
  documents = documents[:-1]
  assert len(documents) > 300
  for document in documents:
    lines = document.split("\n")
    assert all(
        line.strip() == line and len(line.split()) >= 3 for line in lines
    )
  words = text.split()
  assert words.count("the") > 0.03 * len(words)  # English prose.
  assert sum(len(d.split("\n")) > 1 for d in documents) > 0.5 * len(documents)


def test_sample_corpus_is_deterministic(tmp_path, corpus_path):
  again = tmp_path / "again.txt"
  result = helpers.run(
      [
          REPO / "tools" / "make_sample_corpus.py",
          f"--output={again}",
          "--max_mb=0.4",
      ],
      timeout=120,
  )
  assert result.returncode == 0, result.stderr
  assert again.read_bytes() == pathlib.Path(corpus_path).read_bytes()
  assert not list(tmp_path.glob("*.tmp-*"))


def test_sentences_are_split_from_docstring_prose():
  doc = """Summary line of a function.

  More text here. It has two sentences! And a third? Yes it does.

  Args:
    x: an argument.

  >>> example()
  42
  """
  assert sample_corpus.split_sentences(doc) == [
      "Summary line of a function.",
      "More text here.",
      "It has two sentences!",
      "And a third?",
      "Yes it does.",
  ]


def test_vocabulary_has_albert_special_ids(spm_model):
  processor = spm.SentencePieceProcessor(model_file=spm_model)
  assert [processor.id_to_piece(i) for i in range(5)] == [
      "<pad>",
      "<unk>",
      "[CLS]",
      "[SEP]",
      "[MASK]",
  ]
  assert processor.pad_id() == 0 and processor.unk_id() == 1
  assert processor.bos_id() == -1 and processor.eos_id() == -1
  assert all(processor.is_control(i) for i in (0, 2, 3, 4))
  assert processor.get_piece_size() == 2000
  vocab = (
      pathlib.Path(spm_model[: -len(".model")] + ".vocab")
      .read_text(encoding="utf-8")
      .splitlines()
  )
  assert len(vocab) == 2000
  assert [line.split("\t")[0] for line in vocab[:5]] == [
      "<pad>",
      "<unk>",
      "[CLS]",
      "[SEP]",
      "[MASK]",
  ]
  # Lower-cased training text: no upper-case pieces.
  assert not any(
      any(c.isupper() for c in processor.id_to_piece(i)) for i in range(5, 2000)
  )


def test_vocabulary_has_the_original_user_defined_symbols(spm_model):
  # The original README's spm_train line: ( ) " - . en-dash pound euro at
  # ids 5 to 12, each always one piece of its own.
  processor = spm.SentencePieceProcessor(model_file=spm_model)
  symbols = ["(", ")", '"', "-", ".", "\u2013", "\u00a3", "\u20ac"]
  assert [processor.id_to_piece(i) for i in range(5, 13)] == symbols
  # User-defined pieces are never merged with their neighbours.
  assert processor.encode("((--..", out_type=str)[-6:] == list("((--..")
  pieces = processor.encode("a(b)c\u20ac5", out_type=str)
  assert "(" in pieces and ")" in pieces and "\u20ac" in pieces


def test_vocabulary_can_leave_the_symbols_out(tmp_path, corpus_path):
  model, _ = train_sentencepiece(
      input_file=corpus_path,
      model_prefix=str(tmp_path / "plain"),
      vocab_size=300,
      max_sentences=2000,
      user_defined_symbols=(),
      num_threads=1,
  )
  processor = spm.SentencePieceProcessor(model_file=model)
  pieces = [processor.id_to_piece(i) for i in range(300)]
  assert pieces[:5] == ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"]
  assert pieces[5:13] != ["(", ")", '"', "-", ".", "\u2013", "\u00a3", "\u20ac"]
  assert not {"\u2013", "\u00a3", "\u20ac"} & set(pieces)


def test_vocabulary_model_type_bpe(tmp_path, corpus_path):
  model, _ = train_sentencepiece(
      input_file=corpus_path,
      model_prefix=str(tmp_path / "bpe"),
      vocab_size=300,
      max_sentences=2000,
      model_type="bpe",
      num_threads=1,
  )
  processor = spm.SentencePieceProcessor(model_file=model)
  # BPE scores its pieces by merge rank (0, -1, -2, ...); unigram by log
  # probabilities, which are not whole numbers.
  scores = [processor.get_score(i) for i in range(13, 300)]
  assert all(s == int(s) for s in scores)
  assert scores == sorted(scores, reverse=True)
  assert processor.id_to_piece(2) == "[CLS]"


def test_vocabulary_model_type_is_checked(tmp_path, corpus_path):
  with pytest.raises(InputError, match="model_type='word' must be one of"):
    train_sentencepiece(
        input_file=corpus_path,
        model_prefix=str(tmp_path / "w"),
        model_type="word",
    )
  assert not list(tmp_path.iterdir())


def test_training_sample_is_bounded_and_seeded(corpus_path):
  first = sample_sentences(corpus_path, 300, seed=1, lower=True)
  assert len(first) == 300
  assert sample_sentences(corpus_path, 300, seed=1, lower=True) == first
  assert sample_sentences(corpus_path, 300, seed=2, lower=True) != first
  lines = {
      l for l in pathlib.Path(corpus_path).read_text().lower().split("\n") if l
  }
  assert set(first) <= lines


def test_training_errors_write_nothing(tmp_path, corpus_path):
  prefix = tmp_path / "spm"
  with pytest.raises(InputError, match="matches no file"):
    train_sentencepiece(
        input_file=str(tmp_path / "none*.txt"), model_prefix=str(prefix)
    )
  with pytest.raises(InputError, match="Vocabulary size too high"):
    train_sentencepiece(
        input_file=corpus_path,
        model_prefix=str(prefix),
        vocab_size=500_000,
        num_threads=1,
    )
  bad = tmp_path / "bad.txt"
  bad.write_bytes(b"fine\n\xff\n")
  result = helpers.run(
      [
          REPO / "tools" / "train_sentencepiece.py",
          f"--input={bad}",
          f"--model_prefix={prefix}",
      ],
      timeout=120,
  )
  assert result.returncode != 0
  assert result.stderr.strip().splitlines()[-1] == (
      f"train_sentencepiece: error: {bad}, line 2: not valid UTF-8 (invalid "
      "start byte); convert the file to UTF-8"
  )
  assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt"]
