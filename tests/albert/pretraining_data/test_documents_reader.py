"""The documents reader: determinism, resume, and its one-line errors. Its
statistics against the offline generator are in
pretraining_data/test_statistics.py."""

import json
import shutil

import numpy as np
import pytest
import tensorflow as tf

from albert.pretraining import data
from albert.pretraining import documents_data
from albert.pretraining.task import PretrainTask
from albert.modeling.config import AlbertConfig
from albert.pretraining_data import documents_format
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.document_pool import DocumentPool
from albert.pretraining_data.pipeline import create_pretraining_data
from albert.finetuning import feature_cache
from official.errors import InputError
from official.io.tfrecord import TFRecordWriter
from tests.albert.pretraining_data.segments import document_from_segments
from tests.albert.synthetic_records import write_records
from tests.conftest import VOCAB_SIZE
from official.core import input_pipeline
from official.core.seekable_stream import POSITION
from official.core.seekable_stream import StreamPosition
from tests import helpers
from tests.helpers import python_ops_in

SEQ, PRED = 64, 10


@pytest.fixture(scope="module")
def docs(tmp_path_factory, corpus_path, spm_model):
  """A documents dataset of the sample corpus: 3 shards, SOP with the
  original's random_document rule (so the pool is used)."""
  out = tmp_path_factory.mktemp("documents")
  create_pretraining_data(
      input_file=corpus_path,
      output_file=str(out / "docs.tfrecord"),
      spm_model_file=spm_model,
      config=PretrainingDataConfig(
          output_format="documents", dupe_factor=1, block_bytes=96 << 10
      ),
      num_output_shards=3,
  )
  return out


def _dataset(directory, **overrides):
  options = dict(
      seq_length=SEQ,
      max_predictions_per_seq=PRED,
      sentence_task="sop",
      batch_size=32,
      training=False,
      seed=3,
      documents_per_window=64,
  )
  options.update(overrides)
  return documents_data.documents_dataset(
      str(directory / "docs-*.tfrecord"), **options
  )


def _rows(dataset):
  """Every example as bytes of its inputs, labels and masks, sorted."""
  rows = []
  for batch in dataset:
    arrays = [
        batch[name].numpy().reshape(len(batch["input_word_ids"]), -1)
        for name in sorted(batch)
        if name != POSITION
    ]
    rows.extend(
        b"".join(a[r].astype(np.float32).tobytes() for a in arrays)
        for r in range(len(arrays[0]))
    )
  return sorted(rows)


@pytest.fixture(scope="module")
def epoch0(docs):
  """`_rows` of one evaluation pass (epoch 0) of `_dataset(docs)`."""
  return _rows(_dataset(docs))


def test_examples_do_not_depend_on_the_input_pipelines(docs, epoch0):
  # One pass (epoch 0): the same examples from one pipeline, from 2
  # pipelines (files split) and from 4 (documents split), and with another
  # cycle length.
  one = epoch0
  assert len(one) > 1000
  for pipelines in (2, 4):
    parts = []
    for i in range(pipelines):
      context = tf.distribute.InputContext(pipelines, i, pipelines)
      parts += _rows(_dataset(docs, input_context=context))
    assert sorted(parts) == one, pipelines
  assert _rows(_dataset(docs, cycle_length=1)) == one


def test_resume_continues_the_same_stream(docs, epoch0):
  # From the position the last batch carried (a window and a group into an
  # epoch past the first), or by skipping what was consumed: the tail of
  # the uninterrupted stream, bit for bit.
  epoch = len(epoch0)
  total, skip = 80, 60
  assert epoch < skip * 32
  full = [
      {k: v.numpy() for k, v in b.items()}
      for b in _dataset(docs, training=True).take(total)
  ]
  start = StreamPosition.of_pipeline(full[skip - 1][POSITION][-1:], 0)
  assert start.epoch >= 1 and start.window + start.offset > 0
  for resume in (dict(start=start), dict(skip_examples=skip * 32)):
    resumed = [
        {k: v.numpy() for k, v in b.items()}
        for b in _dataset(docs, training=True, **resume).take(total - skip)
    ]
    assert len(resumed) == total - skip
    for a, b in zip(full[skip:], resumed):
      for name in a:
        np.testing.assert_array_equal(a[name], b[name])
  # Another seed, another stream.
  other = next(iter(_dataset(docs, training=True, seed=4)))
  assert not np.array_equal(
      other["input_word_ids"].numpy(), full[0]["input_word_ids"]
  )


def test_new_pairs_and_masks_every_epoch_unless_pinned(docs, epoch0):
  # The evaluation pass is epoch 0 of the training stream (what a pair and
  # its masks are depends on the seed, the epoch and the document only):
  # two epochs of training hold all of epoch 0's examples (windows do not
  # cross epochs) and new ones after them. A masking seed pins both: every
  # epoch is the same, whatever the shuffle seed.
  first, n = set(epoch0), len(epoch0)

  def two_epochs(**options):
    dataset = _dataset(docs, training=True, **options)
    return _rows(dataset.take(2 * n // 32))

  dynamic = two_epochs()
  repeated = sum(row in first for row in dynamic)
  assert repeated == n
  pinned = set(_rows(_dataset(docs, masking_seed=9)))
  assert not pinned & first
  assert set(two_epochs(masking_seed=9)) == pinned
  assert set(_rows(_dataset(docs, seed=4, masking_seed=9))) == pinned


def _copy(docs, target, edit=None):
  shutil.copytree(docs, target)
  if edit:
    manifest = json.loads((target / "manifest.json").read_text())
    edit(manifest)
    (target / "manifest.json").write_text(json.dumps(manifest))
  return target


def _task(pattern, **overrides):
  return PretrainTask(
      train_file_pattern=pattern,
      seq_length=SEQ,
      max_predictions_per_seq=PRED,
      model_config=AlbertConfig(vocab_size=VOCAB_SIZE),
      **{"input_format": "documents", **overrides},
  )


def test_one_line_errors(docs, tmp_path, stats_dataset):
  # Examples read as documents, and the reverse.
  examples_files = stats_dataset[3]
  with pytest.raises(InputError, match="hold examples .* not documents"):
    _task(examples_files[0]).validate_data()
  with pytest.raises(ValueError, match="a documents shard .*input_format"):
    _task(str(docs / "docs-*"), input_format="examples").validate_data()
  # No manifest.
  bare = tmp_path / "bare"
  bare.mkdir()
  shutil.copy(docs / "docs-00000-of-00003.tfrecord", bare / "d.tfrecord")
  with pytest.raises(InputError, match="no manifest.json beside"):
    _task(str(bare / "*")).validate_data()
  # Two vocabularies read together.
  other = _copy(
      docs,
      tmp_path / "other",
      lambda m: m["tokenizer"].update(sha256="0" * 64, path="other.model"),
  )
  with pytest.raises(InputError, match="made with another vocabulary"):
    _task(f"{docs}/docs-*,{other}/docs-*").validate_data()
  # A model with fewer pieces than the data.
  with pytest.raises(InputError, match="AlbertConfig.vocab_size=100"):
    PretrainTask(
        train_file_pattern=str(docs / "docs-*"),
        input_format="documents",
        seq_length=SEQ,
        max_predictions_per_seq=PRED,
        model_config=AlbertConfig(vocab_size=100),
    ).validate_data()
  # NSP with no random documents.
  lonely = _copy(
      docs, tmp_path / "lonely", lambda m: m.update(random_documents=None)
  )
  with pytest.raises(InputError, match="fewer than 2 documents"):
    _task(str(lonely / "docs-*"), sentence_task="nsp").validate_data()


def test_a_short_document_stops_the_reader_in_one_line(docs, tmp_path):
  short = _copy(docs, tmp_path / "short")
  for path in short.glob("docs-*"):
    path.unlink()
  with open(short / "docs-00000-of-00001.tfrecord", "wb") as f:
    writer = TFRecordWriter(f, False)
    writer.write(
        documents_format.serialize_document(document_from_segments([[7]]), 42)
    )
    writer.close()
  task = _task(str(short / "docs-*"), sentence_task="none")
  task.validate_data()  # The first record is a document.
  with pytest.raises(tf.errors.OpError) as raised:
    next(iter(_dataset(short, sentence_task="none")))
  with pytest.raises(InputError) as explained:
    task.explain_data_error(raised.value)
  message = str(explained.value)
  assert "\n" not in message
  assert "fewer than 2 tokens (document_id 42: 1)" in message


def test_pool_read_from_the_shards_is_every_document(docs):
  # A corpus smaller than document_pool_size keeps no second copy: the
  # reader's pool is the shards' documents.
  manifest = json.loads((docs / "manifest.json").read_text())
  assert manifest["random_documents"] == documents_format.POOL_FROM_SHARDS
  source = documents_data.read_documents_data(
      str(docs / "docs-*.tfrecord"), "data"
  )
  pool = source.pool()
  assert isinstance(pool, DocumentPool)
  assert len(pool) == manifest["num_documents"]
  assert len(set(pool.keys.tolist())) == len(pool)


def test_every_input_pipeline_is_tensorflow_ops_as_written(docs, tmp_path):
  # Every input pipeline of the package (pretraining from documents under
  # each sentence task, from examples, fine-tuning from cached features)
  # is TensorFlow ops only: it runs on a TPU host and on every core. And
  # whoever builds one (a trainer, a benchmark, a user's own loop), its
  # functions are traced as written: AutoGraph rewrote 458 of them, 2.9 s,
  # for each documents pipeline built outside a trainer.
  records = write_records(
      tmp_path / "examples.tfrecord", 4, seq_length=SEQ, max_predictions=PRED
  )
  spec = {"input_ids": tf.TensorSpec([SEQ], tf.int32)}
  with helpers.autograph_rewrites() as rewritten:
    pipelines = {
        f"documents {task}": _dataset(docs, sentence_task=task, training=True)
        for task in ("sop", "nsp", "none")
    }
    pipelines["documents eval"] = _dataset(docs)
    for training in (True, False):
      pipelines[f"examples {training}"] = data.pretraining_dataset(
          records,
          seq_length=SEQ,
          max_predictions_per_seq=PRED,
          batch_size=2,
          training=training,
      )
      pipelines[f"fine-tuning {training}"] = feature_cache.record_dataset(
          records, spec, batch_size=2, training=training
      )
    padded = input_pipeline.padded_eval_batches(
        pipelines["fine-tuning False"], batch_size=2, group=2
    )
  assert not rewritten, rewritten
  assert not python_ops_in(padded)
  for name, dataset in pipelines.items():
    assert not python_ops_in(dataset), name

  # The walk sees a Python op where there is one, inside a map's function,
  # and the count sees a function that tf.data hands to AutoGraph.
  def calls_numpy(batch):
    return tf.numpy_function(lambda x: x, [batch["input_mask"]], tf.int32)

  with helpers.autograph_rewrites() as rewritten:
    calls_python = pipelines["examples True"].map(calls_numpy)
  assert python_ops_in(calls_python) == {"PyFunc"}
  assert rewritten == [calls_numpy.__qualname__]
