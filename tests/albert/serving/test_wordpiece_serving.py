"""WordPiece in the graph (albert/serving/wordpiece_preprocessor.py): the
same ids as the Python tokenizer on the mixed test text and the Chinese
corpus, TF Hub's `tokenize` / `bert_pack_inputs` over it, and the export."""

import os

import numpy as np
import pytest
import tensorflow as tf

from albert.modeling.encoder import AlbertEncoder
from albert.modeling.pretrainer import AlbertPretrainer
from albert.serving import exporter
from albert.serving.hub_preprocessing_module import HubPreprocessingModule
from albert.serving.wordpiece_preprocessor import WordPiecePreprocessor
from albert.text import wordpiece
from tests import helpers

DATA = os.path.join(helpers.REPO, "tests", "testdata")
CASES = {
    "mixed": ("wordpiece/vocab.txt", "wordpiece/text.txt"),
    "chinese": ("chinese/vocab.txt", "chinese/corpus.txt"),
}


def _lines(name):
  with open(os.path.join(DATA, CASES[name][1]), encoding="utf-8") as f:
    return f.read().replace("\\x00", "\x00").splitlines()


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("name", sorted(CASES))
def test_graph_ids_equal_the_python_ids(name, lower):
  vocab = os.path.join(DATA, CASES[name][0])
  graph = WordPiecePreprocessor(vocab, 64, lower)
  python = wordpiece.WordPieceTokenizer.from_file(vocab, lower)
  lines = _lines(name)
  ids = graph.tokenize(tf.constant(lines)).to_list()
  for line, row in zip(lines, ids):
    assert row == python.tokenize(line), line
  # A word over 200 characters is one [UNK], as in the original.
  long = graph.tokenize(tf.constant(["a" * 201 + " 手"])).to_list()[0]
  assert long == [python.unk_id, python.piece_to_id("手")]


def test_hub_tokenize_and_pack_group_words_by_the_continuation_rule():
  vocab = os.path.join(DATA, "wordpiece", "vocab.txt")
  preprocessor = WordPiecePreprocessor(vocab, 16, True)
  python = wordpiece.WordPieceTokenizer.from_file(vocab, True)
  hub = HubPreprocessingModule(preprocessor)
  words = hub.tokenize.__call__(tf.constant(["Istanbul 每个手册"]))
  words = words.to_list()[0]
  pieces = [[python.id_to_piece(i) for i in word] for word in words]
  assert pieces == [["ist", "##an", "##bul"], ["每"], ["个"], ["手"], ["册"]]
  special = hub.tokenize.get_special_tokens_dict()
  assert int(special["vocab_size"]) == python.vocab_size
  assert int(special["mask_id"]) == python.mask_id
  packed = hub.bert_pack_inputs.__call__(
      [hub.tokenize.__call__(tf.constant(["Istanbul 每个手册"]))]
  )
  assert packed["input_word_ids"].numpy()[0, 0] == python.cls_id


def test_hub_pack_refuses_unequal_segments_and_a_short_seq_length():
  hub = HubPreprocessingModule(
      WordPiecePreprocessor(os.path.join(DATA, "wordpiece", "vocab.txt"), 16)
  )
  words = hub.tokenize.__call__(tf.constant(["Istanbul 每个", "手册"]))
  pieces = words.merge_dims(1, 2)
  # Words or pieces, the export's length or one given: the same packing.
  fixed = hub.bert_pack_inputs.__call__([pieces, pieces])
  given = hub.bert_pack_inputs.__call__([words, words], tf.constant(16))
  for name, value in fixed.items():
    np.testing.assert_array_equal(given[name], value)
  # TF-Text's trimmer would abort the process on these: an error instead.
  with pytest.raises(tf.errors.InvalidArgumentError, match="same examples"):
    hub.bert_pack_inputs.__call__([words, words[:1]])
  with pytest.raises(tf.errors.InvalidArgumentError, match="too small"):
    hub.bert_pack_inputs.__call__([words, words], tf.constant(3))


def test_each_preprocessor_keeps_its_own_table(monkeypatch):
  # A named lookup table takes its name from its asset's repr, a memory
  # address that a later asset can reuse while the first table lives on (in
  # a loaded SavedModel): the second preprocessor then used the first's
  # vocabulary (ids of the 1,448-entry table gathered from a 159-entry one).
  # Equal reprs stand in for the reused address.
  monkeypatch.setattr(tf.saved_model.Asset, "__repr__", lambda self: "asset")
  chinese = WordPiecePreprocessor(os.path.join(DATA, "chinese", "vocab.txt"))
  mixed = os.path.join(DATA, "wordpiece", "vocab.txt")
  python = wordpiece.WordPieceTokenizer.from_file(mixed, True)
  text = "Istanbul 每个手册"
  chinese.tokenize(tf.constant([text]))
  ids = WordPiecePreprocessor(mixed).tokenize(tf.constant([text])).to_list()
  assert ids[0] == python.tokenize(text)


@pytest.mark.slow
def test_export_with_a_vocab_file_serves_raw_text(tmp_path):
  vocab = os.path.join(DATA, "chinese", "vocab.txt")
  config = helpers.tiny_config(vocab_size=1448, max_position_embeddings=32)
  pretrainer = AlbertPretrainer(AlbertEncoder.from_config_object(config))
  pretrainer(pretrainer.dummy_inputs())
  out = str(tmp_path / "export")
  exporter.export(pretrainer, vocab_file=vocab, export_dir=out, seq_length=32)
  text = _lines("chinese")[:3]
  python = wordpiece.WordPieceTokenizer.from_file(vocab, True)
  loaded = tf.saved_model.load(os.path.join(out, "preprocessing"))
  packed = loaded.signatures["serving_default"](text=tf.constant(text))
  for row, line in zip(packed["input_word_ids"].numpy(), text):
    ids = [python.cls_id] + python.tokenize(line)[: 32 - 2] + [python.sep_id]
    np.testing.assert_array_equal(row[: len(ids)], ids)
  encoder = tf.saved_model.load(os.path.join(out, "encoder"))
  info = encoder.signatures["tokenization_info"]()
  assert info["vocab_file"].numpy().decode().endswith("vocab.txt")
  # A vocabulary of another size than the model's: refused, nothing written.
  with pytest.raises(ValueError, match="has 159 entries but the model's"):
    exporter.export(
        pretrainer,
        vocab_file=os.path.join(DATA, "wordpiece", "vocab.txt"),
        export_dir=str(tmp_path / "other"),
        seq_length=32,
    )
  assert not (tmp_path / "other").exists()


@pytest.mark.parametrize("name", sorted(CASES))
def test_graph_piece_spans_equal_the_python_spans(name):
  vocab = os.path.join(DATA, CASES[name][0])
  graph = WordPiecePreprocessor(vocab, 64, True)
  python = wordpiece.WordPieceTokenizer.from_file(vocab, True)
  words = [w for line in _lines(name) for w in line.split()]
  pieces = graph.tokenize(tf.constant(words))
  start, end = graph.piece_char_spans(tf.constant(words), pieces)
  checked = 0
  for word, ids, a, b in zip(
      words, pieces.to_list(), start.to_list(), end.to_list()
  ):
    expected = python.piece_char_spans(word, ids)
    if name == "mixed" and "Σ" in word:
      # Lower-casing "ΟΔΟΣ" letter by letter gives σ where the whole word
      # gives ς: the graph gives the whole word, Python its basic token.
      assert list(zip(a, b)) == [(0, len(word))] * len(ids)
      continue
    assert list(zip(a, b)) == expected, word
    checked += len(ids)
  assert checked > (1000 if name == "chinese" else 50)
