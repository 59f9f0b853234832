"""create_pretraining_data --output_format=documents: what it writes."""

import json

import numpy as np
import pytest

from albert.pretraining_data import documents_format
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.document_pool import DocumentPool
from albert.pretraining_data.pipeline import create_pretraining_data
from official.errors import InputError
from tests import helpers
from tests.albert.pretraining_data.segments import document_from_segments


def _parse(pattern):
  import tensorflow as tf

  spec = {
      "token_ids": tf.io.RaggedFeature(tf.int64),
      "segment_lengths": tf.io.RaggedFeature(tf.int64),
      "document_id": tf.io.FixedLenFeature([1], tf.int64),
  }
  files = sorted(tf.io.gfile.glob(pattern))
  rows = []
  for batch in tf.data.TFRecordDataset(files).batch(512):
    parsed = tf.io.parse_example(batch, spec)
    rows.extend(
        zip(
            parsed["document_id"][:, 0].numpy().tolist(),
            parsed["token_ids"].numpy(),
            parsed["segment_lengths"].numpy(),
        )
    )
  return rows


def test_every_document_once_as_tokenized(documents_data, documents):
  # The sample corpus's documents (the `documents` fixture encodes it in
  # one block), each once, whole, with its segments.
  manifest, pattern = documents_data
  rows = _parse(pattern)
  assert manifest["format"] == documents_format.FORMAT
  assert manifest["num_documents"] == len(rows) == len(documents)
  assert manifest["num_short_documents"] == 0
  assert manifest["flags"]["dupe_factor"] == 1
  assert len({key for key, _, _ in rows}) == len(rows)
  by_content = sorted(
      (tuple(tokens), tuple(lengths)) for _, tokens, lengths in rows
  )
  expected = sorted(
      (tuple(d.tokens.tolist()), tuple(np.diff(d.offsets).tolist()))
      for d in documents
  )
  assert by_content == expected
  assert manifest["num_tokens"] == sum(len(d.tokens) for d in documents)
  assert sum(s["num_documents"] for s in manifest["shards"]) == len(rows)
  # Scattered: the shards are not the corpus order cut in two.
  first = [key for key, _, _ in _parse(pattern.replace("*", "00000-*"))]
  assert first != sorted(first)


def test_vocabulary_entry_round_trips(tokenizer, documents_data):
  manifest, _ = documents_data
  vocabulary = documents_format.vocabulary_from_entry(manifest["vocabulary"])
  np.testing.assert_array_equal(
      vocabulary.is_word_start, tokenizer.is_word_start
  )
  np.testing.assert_array_equal(
      vocabulary.replacement_ids, tokenizer.replacement_ids
  )
  assert (vocabulary.cls_id, vocabulary.sep_id, vocabulary.mask_id) == (
      tokenizer.cls_id,
      tokenizer.sep_id,
      tokenizer.mask_id,
  )


def test_the_record_parses_as_written():
  import tensorflow as tf

  document = document_from_segments([[5, 6, 7], [8], [9, 300000]])
  record = documents_format.serialize_document(document, (3 << 32) | 7)
  example = tf.train.Example.FromString(record)
  feature = example.features.feature
  assert list(feature["token_ids"].int64_list.value) == [5, 6, 7, 8, 9, 300000]
  assert list(feature["segment_lengths"].int64_list.value) == [3, 1, 2]
  assert list(feature["document_id"].int64_list.value) == [(3 << 32) | 7]


def test_pool_file_short_documents_and_errors(tmp_path, spm_model):
  # A corpus with more documents than the pool holds gets a pool file; a
  # one-token document is left out and counted; --dupe_factor is refused.
  lines = []
  for d in range(30):
    lines += [f"document {d} says hello to the world.", "and more words.", ""]
  lines += ["x", ""]
  corpus = tmp_path / "corpus.txt"
  corpus.write_text("\n".join(lines))
  config = PretrainingDataConfig(
      output_format="documents", dupe_factor=1, document_pool_size=10
  )
  manifest = create_pretraining_data(
      input_file=str(corpus),
      output_file=str(tmp_path / "out" / "docs.tfrecord"),
      spm_model_file=spm_model,
      config=config,
  )
  assert manifest["num_input_documents"] == 31
  assert manifest["num_short_documents"] == 1
  assert manifest["num_documents"] == 30
  assert manifest["random_documents"] == documents_format.RANDOM_DOCUMENTS_FILE
  pool = DocumentPool.load(str(tmp_path / "out" / "random_documents.npz"))
  assert len(pool) == 10
  on_disk = json.loads((tmp_path / "out" / "manifest.json").read_text())
  assert on_disk["random_documents"] == manifest["random_documents"]
  with pytest.raises(InputError, match="dupe_factor=2 does not apply"):
    PretrainingDataConfig(output_format="documents", dupe_factor=2)
  result = helpers.run(
      [
          "tools/create_pretraining_data.py",
          f"--input_file={corpus}",
          f"--output_file={tmp_path / 'cli' / 'docs.tfrecord'}",
          f"--spm_model_file={spm_model}",
          "--output_format=documents",
          "--dupe_factor=10",
      ]
  )
  assert result.returncode == 1
  assert (
      result.stderr.strip()
      .splitlines()[-1]
      .startswith(
          "create_pretraining_data: error: --dupe_factor=10 does not apply"
      )
  )
  assert not (tmp_path / "cli").exists()


@pytest.mark.slow
def test_beam_writes_the_same_documents(tmp_path, corpus_path, spm_model):
  pytest.importorskip(
      "apache_beam", reason="apache-beam is an optional dependency"
  )
  from albert.pretraining_data import beam_pipeline

  config = PretrainingDataConfig(
      output_format="documents",
      dupe_factor=1,
      block_bytes=96 << 10,
      document_pool_size=40,
  )
  outputs = {}
  for runner in ("local", "beam"):
    out = tmp_path / runner
    common = dict(
        input_file=corpus_path,
        output_file=str(out / "docs.tfrecord"),
        spm_model_file=spm_model,
        config=config,
        num_output_shards=2,
    )
    if runner == "local":
      create_pretraining_data(num_workers=2, **common)
    else:
      beam_pipeline.run(runner="DirectRunner", **common)
    outputs[runner] = {p.name: p.read_bytes() for p in out.iterdir()}
  manifests = {
      k: json.loads(v.pop("manifest.json")) for k, v in outputs.items()
  }
  assert outputs["local"] == outputs["beam"]  # Shards and pool file.
  assert "random_documents.npz" in outputs["beam"]
  for key in ("num_documents", "shards", "vocabulary", "random_documents"):
    assert manifests["local"][key] == manifests["beam"][key], key
