"""DocumentPool: a seeded, bounded sample of every block; random B (NSP and
random_document) drawn from the whole corpus."""

import numpy as np
import pytest
import sentencepiece as spm
import tensorflow as tf

from albert.pretraining_data import corpus_reader
from albert.pretraining_data.block_generator import block_documents
from albert.pretraining_data.block_generator import BlockStats
from albert.pretraining_data.block_generator import generate_block
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.document_pool import document_key
from albert.pretraining_data.document_pool import DocumentPool
from albert.pretraining_data.document_pool import sample_block
from official.errors import InputError
from tests.albert.pretraining_data.segments import document_from_segments

MARKERS = ["apple", "river", "stone", "cloud"]


def _docs(n, base=0):
  return [
      document_from_segments([[base + d, base + d + 1], [base + d + 2]])
      for d in range(n)
  ]


def test_sample_is_seeded_bounded_and_keyed():
  config = PretrainingDataConfig(document_pool_size=10)
  documents = _docs(50)
  first = sample_block(documents, 3, num_blocks=2, config=config)
  again = sample_block(documents, 3, num_blocks=2, config=config)
  assert len(first) == 5  # ceil(10 / 2 blocks)
  np.testing.assert_array_equal(first.keys, again.keys)
  indices = [int(k) - (3 << 32) for k in first.keys]
  assert indices == sorted(indices) and len(set(indices)) == 5
  for d, index in enumerate(indices):
    np.testing.assert_array_equal(
        first.document(d).tokens, documents[index].tokens
    )
    np.testing.assert_array_equal(
        first.document(d).offsets, documents[index].offsets
    )
  other_seed = sample_block(
      documents,
      3,
      num_blocks=2,
      config=PretrainingDataConfig(document_pool_size=10, random_seed=1),
  )
  assert other_seed.keys.tolist() != first.keys.tolist()
  # A block with fewer documents than its share gives them all.
  small = sample_block(documents[:3], 0, num_blocks=2, config=config)
  assert small.keys.tolist() == [document_key(0, d) for d in range(3)]


def test_pool_round_trips_and_never_picks_the_excluded(tmp_path):
  pool = DocumentPool.concatenate(
      [
          DocumentPool.from_documents(_docs(2), [document_key(0, 0), 1]),
          DocumentPool.from_documents(_docs(1, 100), [document_key(1, 0)]),
      ]
  )
  pool.save(str(tmp_path / "pool.npz"))
  loaded = DocumentPool.load(str(tmp_path / "pool.npz"))
  assert len(loaded) == 3
  np.testing.assert_array_equal(loaded.document(2).tokens, [100, 101, 102])
  np.testing.assert_array_equal(loaded.document(2).offsets, [0, 2, 3])
  rng = np.random.default_rng(0)
  picked = [loaded.pick(rng, exclude=1).tokens[0] for _ in range(300)]
  assert set(picked) == {0, 100}  # Never the document keyed 1.


def test_random_document_needs_sop():
  with pytest.raises(InputError, match="random_document"):
    PretrainingDataConfig(
        sentence_task="none", single_segment="random_document"
    )
  with pytest.raises(InputError, match="single_segment='x' must be one of"):
    PretrainingDataConfig(single_segment="x")
  assert PretrainingDataConfig(sentence_task="nsp").uses_random_documents
  # The original's rule by default for SOP; split for none.
  assert PretrainingDataConfig().single_segment == "random_document"
  assert PretrainingDataConfig().uses_random_documents
  assert not PretrainingDataConfig(single_segment="split").uses_random_documents
  none = PretrainingDataConfig(sentence_task="none")
  assert none.single_segment == "split" and not none.uses_random_documents


@pytest.fixture(scope="module")
def marked_corpus(tmp_path_factory):
  """4 blocks of about 8 KB; every sentence of block i names MARKERS[i]."""
  path = tmp_path_factory.mktemp("marked") / "corpus.txt"
  blocks = []
  for marker in MARKERS:
    docs, size = [], 0
    while size < 8000:
      doc = "\n".join(
          f"the {marker} number {k} is here in sentence {j}."
          for j in range(4)
          for k in [len(docs)]
      )
      docs.append(doc)
      size += len(doc) + 2
    blocks.append("\n\n".join(docs))
  path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
  return str(path)


def _feature(example, name):
  return np.array(example.features.feature[name].int64_list.value)


def test_nsp_negatives_come_from_the_whole_corpus(
    marked_corpus, tokenizer, spm_model
):
  processor = spm.SentencePieceProcessor(model_file=spm_model)
  config = PretrainingDataConfig(
      max_seq_length=64,
      sentence_task="nsp",
      dupe_factor=2,
      block_bytes=8 << 10,
      document_pool_size=40,
  )
  blocks = corpus_reader.plan_blocks(
      [(marked_corpus, len(open(marked_corpus, "rb").read()))],
      config.block_bytes,
  )
  assert len(blocks) >= 4
  pool = DocumentPool.concatenate(
      [
          sample_block(
              block_documents(b, tokenizer, config),
              b.index,
              len(blocks),
              config,
          )
          for b in blocks
      ]
  )
  assert {int(k) >> 32 for k in pool.keys} == set(range(len(blocks)))
  sources = []
  for example in generate_block(
      blocks[0], tokenizer, config, BlockStats(), pool=pool
  ):
    parsed = tf.train.Example.FromString(example.record)
    if _feature(parsed, "next_sentence_labels")[0] != 1:
      continue
    ids = _feature(parsed, "input_ids")
    weights = np.array(
        parsed.features.feature["masked_lm_weights"].float_list.value
    )
    positions = _feature(parsed, "masked_lm_positions")[weights > 0]
    ids[positions] = _feature(parsed, "masked_lm_ids")[weights > 0]  # Unmask.
    b_ids = ids[(_feature(parsed, "segment_ids") == 1) & (ids != 3)]
    b_text = processor.decode(b_ids.tolist())
    sources.append([m for m in MARKERS if m in b_text])
  assert len(sources) > 20
  # Every B of a negative names one block's marker; most come from the
  # other three blocks, as a draw from the whole corpus does (~3/4).
  assert all(len(s) == 1 for s in sources)
  foreign = np.mean([s[0] != MARKERS[0] for s in sources])
  assert 0.55 < foreign < 0.95, foreign


def test_generate_block_requires_the_pool(corpus_path, tokenizer):
  config = PretrainingDataConfig(sentence_task="nsp")
  block = corpus_reader.plan_blocks([(corpus_path, 1000)], 1000)[0]
  with pytest.raises(ValueError, match="pass the pool"):
    next(generate_block(block, tokenizer, config, BlockStats()))
