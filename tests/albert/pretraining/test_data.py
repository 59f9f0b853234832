"""albert/pretraining/data.py: the training read order (file shuffle,
interleave, windows) and resume."""

import numpy as np
import pytest

from albert.pretraining import data
from official.core.seekable_stream import POSITION
from official.core.seekable_stream import StreamPosition
from tests.albert.synthetic_records import write_records

SEQ, PRED = 32, 5


@pytest.fixture(scope="module")
def files(tmp_path_factory):
  """6 files of 20 records; seed f makes file f's records recognisable."""
  root = tmp_path_factory.mktemp("order")
  return [
      write_records(root / f"part-{f}.tfrecord", 20, seed=f) for f in range(6)
  ]


def _first_tokens(files):
  """input_word_ids of every record -> its file index."""
  lookup = {}
  for f, path in enumerate(files):
    for batch in data.pretraining_dataset(
        path,
        seq_length=SEQ,
        max_predictions_per_seq=PRED,
        batch_size=20,
        training=False,
    ):
      for row in batch["input_word_ids"].numpy():
        lookup[row.tobytes()] = f
  return lookup


def _sources(files, n, **kwargs):
  lookup = _first_tokens(files)
  dataset = data.pretraining_dataset(
      ",".join(files),
      seq_length=SEQ,
      max_predictions_per_seq=PRED,
      batch_size=1,
      training=True,
      **kwargs,
  )
  return [
      lookup[b["input_word_ids"].numpy()[0].tobytes()] for b in dataset.take(n)
  ]


@pytest.mark.slow
def test_interleaves_cycle_length_files_one_record_each(files):
  # No buffer (size 1): records come round-robin from cycle_length files.
  sources = _sources(files, 9, cycle_length=3, shuffle_buffer_size=1)
  assert len(set(sources[:3])) == 3
  assert sources[3:6] == sources[:3] and sources[6:9] == sources[:3]
  # The file list is shuffled: another seed opens other files first.
  firsts = {
      tuple(_sources(files, 3, cycle_length=3, shuffle_buffer_size=1, seed=s))
      for s in range(4)
  }
  assert len(firsts) > 1


def test_default_cycle_length_is_the_core_count(files, monkeypatch):
  monkeypatch.setattr(data, "available_cores", lambda: 2)
  sources = _sources(files, 6, shuffle_buffer_size=1)
  assert len(set(sources[:2])) == 2 and sources[2:4] == sources[:2]
  monkeypatch.setattr(data, "available_cores", lambda: 64)  # > files
  sources = _sources(files, 12, shuffle_buffer_size=1)
  assert sorted(sources[:6]) == list(range(6)) and sources[6:12] == sources[:6]


def test_windows_mix_and_a_resume_continues_the_same_stream(files):
  plain = _sources(files, 30, cycle_length=2, shuffle_buffer_size=1)
  mixed = _sources(files, 30, cycle_length=2, shuffle_buffer_size=40)
  assert plain != mixed
  # From the position after record 130 (the second epoch), or with 130
  # records skipped: the stream from its 131st record on.
  lookup = _first_tokens(files)
  kwargs = dict(
      seq_length=SEQ,
      max_predictions_per_seq=PRED,
      batch_size=1,
      training=True,
      cycle_length=2,
      shuffle_buffer_size=7,
  )
  batches = list(data.pretraining_dataset(",".join(files), **kwargs).take(150))
  whole = [b["input_word_ids"].numpy()[0].tobytes() for b in batches]
  start = StreamPosition.of_pipeline(batches[129][POSITION], 0)
  assert start.epoch == 1 and start.window > 0
  for resume in (dict(start=start), dict(skip_examples=130)):
    resumed = [
        b["input_word_ids"].numpy()[0].tobytes()
        for b in data.pretraining_dataset(
            ",".join(files), **resume, **kwargs
        ).take(20)
    ]
    assert resumed == whole[130:]
  assert np.all([w in lookup for w in whole])
