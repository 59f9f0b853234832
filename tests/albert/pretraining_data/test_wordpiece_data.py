"""Pretraining data and vocabularies from WordPiece (a vocab.txt), on the
Chinese text of tests/testdata/chinese (from Debian's zh_CN manual pages)."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from albert import features
from albert.pretraining_data import wordpiece_trainer
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.pipeline import create_pretraining_data
from albert.text.wordpiece import WordPieceTokenizer
from official.errors import InputError
from tests import helpers

CHINESE = os.path.join(helpers.REPO, "tests", "testdata", "chinese")
CORPUS = os.path.join(CHINESE, "corpus.txt")
VOCAB = os.path.join(CHINESE, "vocab.txt")
CONFIG = dict(
    max_seq_length=64,
    max_predictions_per_seq=10,
    dupe_factor=2,
    block_bytes=16 << 10,
)


def _generate(out_dir, workers=1, **overrides):
  return create_pretraining_data(
      input_file=CORPUS,
      output_file=str(out_dir / "train.tfrecord"),
      vocab_file=VOCAB,
      config=PretrainingDataConfig(**{**CONFIG, **overrides}),
      num_output_shards=2,
      num_workers=workers,
  )


def _examples(out_dir):
  spec = features.parse_spec(64, 10)
  rows = []
  for path in sorted(out_dir.glob("train-*.tfrecord")):
    for record in tf.data.TFRecordDataset(str(path)):
      rows.append(
          {
              k: v.numpy()
              for k, v in tf.io.parse_single_example(record, spec).items()
          }
      )
  return rows


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
  out = tmp_path_factory.mktemp("zh") / "one"
  return out, _generate(out)


def test_manifest_and_schema(generated):
  out, manifest = generated
  assert manifest["tokenizer"]["kind"] == "wordpiece"
  assert manifest["tokenizer"]["vocab_size"] == 1448
  assert "spm_model" not in manifest
  assert manifest["num_examples"] > 100
  assert [f["name"] for f in manifest["features"]] == [
      f.record_name for f in features.PRETRAINING_FEATURES
  ]


def test_whole_words_by_the_continuation_rule(generated):
  # A masked `##` piece is masked with the piece before it (one word), and
  # each Chinese character is a word alone: the original's
  # `_is_start_piece_bert`. Each example masks round(15% of its tokens),
  # at least 1 and at most 10, or a little less where a whole word does
  # not fit.
  out, _ = generated
  tokenizer = WordPieceTokenizer.from_file(VOCAB, True)
  masked = target = continuation_masked = 0
  for row in _examples(out):
    chosen = {
        int(p): int(i)
        for p, i, w in zip(
            row["masked_lm_positions"],
            row["masked_lm_ids"],
            row["masked_lm_weights"],
        )
        if w
    }
    masked += len(chosen)
    specials = (tokenizer.cls_id, tokenizer.sep_id)
    for p, i in chosen.items():
      piece = tokenizer.id_to_piece(i)  # the original piece there
      if piece.startswith("##"):
        continuation_masked += 1
        # A segment cut inside a word starts with a `##` piece: after
        # [SEP] it starts a word (masking.py; the original would join it
        # to the word before the [SEP]).
        assert p - 1 in chosen or row["input_ids"][p - 1] in specials, piece
    length = int(np.sum(row["input_mask"]))
    target += min(10, max(1, int(round(0.15 * length))))
  assert 0.95 * target <= masked <= target, (masked, target)
  assert continuation_masked > 0  # the corpus's English words give some


def test_bytes_do_not_depend_on_the_number_of_workers(generated, tmp_path):
  out, manifest = generated
  two = tmp_path / "two"
  assert _generate(two, workers=2)["shards"] == manifest["shards"]
  for a, b in zip(sorted(out.glob("train-*")), sorted(two.glob("train-*"))):
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.slow
def test_beam_runner_writes_the_same_bytes(generated, tmp_path):
  from albert.pretraining_data import beam_pipeline

  out, _ = generated
  beam_pipeline.run(
      input_file=CORPUS,
      output_file=str(tmp_path / "train.tfrecord"),
      vocab_file=VOCAB,
      config=PretrainingDataConfig(**CONFIG),
      num_output_shards=2,
      runner="DirectRunner",
  )
  ours = sorted(tmp_path.glob("train-*.tfrecord"))
  theirs = sorted(out.glob("train-*.tfrecord"))
  assert [p.read_bytes() for p in ours] == [p.read_bytes() for p in theirs]
  manifest = json.loads((tmp_path / "manifest.json").read_text())
  assert manifest["tokenizer"]["kind"] == "wordpiece"


def test_trained_vocabulary_covers_its_corpus(tmp_path):
  out = tmp_path / "vocab.txt"
  vocab = wordpiece_trainer.train_wordpiece(
      input_file=CORPUS, vocab_file=str(out), vocab_size=2000
  )
  assert vocab[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
  assert len(vocab) <= 2000 and len(set(vocab)) == len(vocab)
  tokenizer = WordPieceTokenizer.from_file(str(out), True)
  with open(CORPUS, encoding="utf-8") as f:
    ids = [i for line in f for i in tokenizer.tokenize(line)]
  assert tokenizer.unk_id not in ids  # every character is in it
  assert "手" in vocab and "##手" in vocab
  with pytest.raises(InputError, match="vocab_size=100 is below the"):
    wordpiece_trainer.train_wordpiece(
        input_file=CORPUS,
        vocab_file=str(tmp_path / "small.txt"),
        vocab_size=100,
    )
  assert not (tmp_path / "small.txt").exists()


@pytest.mark.parametrize(
    "flags,message",
    [
        ([], "give --spm_model_file (a SentencePiece model) or --vocab_file"),
        (
            [f"--vocab_file={VOCAB}", "--spm_model_file={spm}"],
            "is not the vocabulary of --spm_model_file",
        ),
    ],
)
@pytest.mark.slow
def test_tokenizer_flags_are_one_line(tmp_path, spm_model, flags, message):
  out = tmp_path / "out"
  run = helpers.run(
      [
          "tools/create_pretraining_data.py",
          f"--input_file={CORPUS}",
          f"--output_file={out}/t.tfrecord",
          *[f.format(spm=spm_model) for f in flags],
      ]
  )
  helpers.assert_one_line(run, "create_pretraining_data", message)
  assert not out.exists()
