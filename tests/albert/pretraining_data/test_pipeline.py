"""create_pretraining_data: sharding, determinism, resume, errors, Beam."""

import hashlib
import io
import json
import os
import pathlib
import subprocess

import pytest
import sentencepiece as spm

from albert.pretraining_data.data_config import PretrainingDataConfig
from official.errors import InputError
from albert.pretraining_data.pipeline import create_pretraining_data
from albert.pretraining_data.staging import StagingDirectory
from official.io.tfrecord import read_frames
from tests import helpers

REPO = pathlib.Path(helpers.REPO)
TOOL = REPO / "tools" / "create_pretraining_data.py"
# 48 KB blocks: 9 blocks of the 400 KB sample corpus.
SMALL = dict(
    max_seq_length=64,
    max_predictions_per_seq=10,
    dupe_factor=2,
    block_bytes=48 << 10,
)


def _generate(
    out_dir,
    corpus,
    model,
    shards=3,
    workers=1,
    gzip=False,
    on_shard_done=None,
    **overrides,
):
  config = PretrainingDataConfig(**{**SMALL, **overrides})
  return create_pretraining_data(
      input_file=corpus,
      output_file=str(out_dir / "train.tfrecord"),
      spm_model_file=model,
      config=config,
      num_output_shards=shards,
      num_workers=workers,
      gzip=gzip,
      on_shard_done=on_shard_done,
  )


def read_records_from_bytes(data):
  return read_frames(io.BytesIO(data))


def _shard_bytes(out_dir):
  return [p.read_bytes() for p in sorted(out_dir.glob("train-*.tfrecord"))]


@pytest.fixture(scope="module")
def reference(tmp_path_factory, corpus_path, spm_model):
  """An uninterrupted single-process run."""
  out = tmp_path_factory.mktemp("reference")
  manifest = _generate(out, corpus_path, spm_model)
  return manifest, _shard_bytes(out)


def test_bytes_do_not_depend_on_the_number_of_workers(
    tmp_path, corpus_path, spm_model, reference
):
  manifest, shards = reference
  assert len(shards) == 3 and all(shards)
  out = tmp_path / "two_workers"
  two = _generate(out, corpus_path, spm_model, workers=2)
  assert _shard_bytes(out) == shards
  drop = ("fingerprint",)
  assert {k: v for k, v in two.items() if k not in drop} == {
      k: v for k, v in manifest.items() if k not in drop
  }
  # The seed matters, and nothing else is left in the directory.
  other = tmp_path / "other_seed"
  _generate(other, corpus_path, spm_model, random_seed=1)
  assert _shard_bytes(other) != shards
  assert sorted(p.name for p in out.iterdir()) == ["manifest.json"] + [
      f"train-{i:05d}-of-00003.tfrecord" for i in range(3)
  ]


def test_bytes_do_not_depend_on_the_shuffle_memory(
    tmp_path, corpus_path, spm_model, reference
):
  # 20 KB parts: each shard (~200 KB) is written in about ten order ranges,
  # which must give the bytes of one whole sort.
  config = PretrainingDataConfig(**SMALL)
  create_pretraining_data(
      input_file=corpus_path,
      output_file=str(tmp_path / "train.tfrecord"),
      spm_model_file=spm_model,
      config=config,
      num_output_shards=3,
      num_workers=1,
      shuffle_memory_mb=0.02,
  )
  assert min(len(s) for s in reference[1]) > 5 * 20 << 10
  assert _shard_bytes(tmp_path) == reference[1]


def test_shards_are_one_global_shuffle(tmp_path, corpus_path, spm_model):
  # >= 8 blocks, dupe_factor 10, 4 shards: every document's examples are
  # spread over each shard (uniform: ~0.8; block after block: ~0.4).
  manifest = _generate(
      tmp_path, corpus_path, spm_model, shards=4, dupe_factor=10
  )
  assert manifest["num_input_tokens"] > 0
  mixing = manifest["mixing"]
  assert mixing["min_examples_per_document"] == 8
  assert mixing["documents"] > 200
  assert mixing["mean_document_span"] >= 0.7, mixing
  # Each shard is a sample of the whole: about a quarter of the examples.
  counts = [s["num_examples"] for s in manifest["shards"]]
  assert max(counts) / min(counts) < 1.1, counts


def test_manifest_describes_the_shards(
    tmp_path, corpus_path, spm_model, reference
):
  manifest, shards = reference
  counts = [sum(1 for _ in read_records_from_bytes(s)) for s in shards]
  assert [s["num_examples"] for s in manifest["shards"]] == counts
  assert manifest["num_examples"] == sum(counts)
  assert manifest["flags"]["dupe_factor"] == 2
  assert manifest["flags"]["sentence_task"] == "sop"
  assert (
      manifest["spm_model"]["sha256"]
      == hashlib.sha256(pathlib.Path(spm_model).read_bytes()).hexdigest()
  )
  assert [f["name"] for f in manifest["features"]][0] == "input_ids"
  assert manifest["inputs"] == [
      {
          "path": os.path.abspath(corpus_path),
          "bytes": os.path.getsize(corpus_path),
      }
  ]


def test_gzip_holds_the_same_records(
    tmp_path, corpus_path, spm_model, reference
):
  import tensorflow as tf

  manifest = _generate(tmp_path, corpus_path, spm_model, gzip=True)
  assert manifest["compression"] == "GZIP"
  files = sorted(str(p) for p in tmp_path.glob("train-*.tfrecord"))
  for path, plain in zip(files, reference[1]):
    records = [
        r.numpy()
        for r in tf.data.TFRecordDataset(path, compression_type="GZIP")
    ]
    assert records == list(read_records_from_bytes(plain))
  # The package's own input pipeline reads them as they are named.
  from albert.pretraining import data

  pattern = str(tmp_path / "train-*.tfrecord")
  data.check_record_shapes(pattern, 64, 10)
  dataset = data.pretraining_dataset(
      pattern,
      seq_length=64,
      max_predictions_per_seq=10,
      batch_size=4,
      training=False,
  )
  batch = next(iter(dataset))
  assert batch["input_word_ids"].shape == (4, 64)


def test_crash_then_rerun_gives_identical_bytes(
    tmp_path, corpus_path, spm_model, reference
):
  def crash(shard):
    raise RuntimeError(f"simulated crash after shard {shard}")

  with pytest.raises(RuntimeError, match="simulated crash"):
    _generate(tmp_path, corpus_path, spm_model, workers=2, on_shard_done=crash)
  # Nothing is in place yet; the work so far is in the staging directory.
  (staging,) = [p for p in tmp_path.iterdir()]
  assert staging.name.startswith(".train.partial-")
  (staging / "block-000004.rec.tmp-999").write_bytes(b"half a record")
  finished = []
  _generate(
      tmp_path, corpus_path, spm_model, workers=2, on_shard_done=finished.append
  )
  assert len(finished) == 2  # The shard staged before the crash is kept.
  assert _shard_bytes(tmp_path) == reference[1]
  assert not staging.exists()
  # A third run finds the output up to date.
  again = []
  _generate(tmp_path, corpus_path, spm_model, on_shard_done=again.append)
  assert not again and _shard_bytes(tmp_path) == reference[1]


def test_bad_line_late_in_the_corpus_leaves_nothing(
    tmp_path, corpus_path, spm_model
):
  corpus = tmp_path / "bad.txt"
  good = pathlib.Path(corpus_path).read_bytes()[:200_000]
  corpus.write_bytes(good + b"\n\nThe end \xc3\x28 here.\n")
  out = tmp_path / "out"
  done = []
  with pytest.raises(InputError, match=r"bad\.txt, line \d+: not valid UTF-8"):
    _generate(out, str(corpus), spm_model, shards=3, on_shard_done=done.append)
  # Shards are written only once every unit is done, so none is ...
  assert not done
  assert not out.exists()  # ... and nothing is left behind.
  # Nor any of several directories the run made (outputs and manifest).
  nested = tmp_path / "a" / "b" / "c"
  with pytest.raises(InputError, match="not valid UTF-8"):
    create_pretraining_data(
        input_file=str(corpus),
        output_file=str(nested / "train.tfrecord"),
        spm_model_file=spm_model,
        config=PretrainingDataConfig(**SMALL),
        num_output_shards=2,
        manifest_file=str(tmp_path / "meta" / "x" / "manifest.json"),
    )
  assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt"]


def test_manifest_in_a_new_directory(tmp_path, corpus_path, spm_model):
  manifest_file = tmp_path / "meta" / "sub" / "manifest.json"
  corpus = tmp_path / "small.txt"
  corpus.write_bytes(pathlib.Path(corpus_path).read_bytes()[:60_000])
  manifest = create_pretraining_data(
      input_file=str(corpus),
      output_file=str(tmp_path / "out" / "t.tfrecord"),
      spm_model_file=spm_model,
      config=PretrainingDataConfig(**SMALL),
      num_output_shards=1,
      manifest_file=str(manifest_file),
  )
  assert (
      json.loads(manifest_file.read_text())["num_examples"]
      == manifest["num_examples"]
      > 0
  )
  assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["t.tfrecord"]


def _cli(*args, cwd=None):
  return helpers.run([TOOL, *args], cwd=cwd, timeout=300)


def test_command_line_run(tmp_path, corpus_path, spm_model):
  import tensorflow as tf

  out = tmp_path / "cli"
  result = _cli(
      f"--input_file={corpus_path}",
      f"--spm_model_file={spm_model}",
      f"--output_file={out}/train.tfrecord",
      "--max_seq_length=64",
      "--max_predictions_per_seq=10",
      "--dupe_factor=1",
      "--num_output_shards=2",
      "--num_workers=2",
      "--random_next_sentence=True",
      "--block_size_mb=0.1",
  )
  assert result.returncode == 0, result.stderr
  assert "examples/s" in result.stderr and "ETA" in result.stderr
  manifest = json.loads((out / "manifest.json").read_text())
  assert manifest["flags"]["sentence_task"] == "nsp"
  assert manifest["num_examples"] == sum(
      sum(1 for _ in tf.data.TFRecordDataset(str(p)))
      for p in out.glob("train-*-of-00002.tfrecord")
  )


def _error_cases(tmp, corpus, model):
  empty = tmp / "empty.txt"
  empty.write_text("")
  blank = tmp / "blank.txt"
  blank.write_text("  \n\n\t\n" * 50)
  latin = tmp / "latin1.txt"
  latin.write_bytes(b"First line.\nSecond line.\n\nCaf\xe9 au lait.\n")
  garbage = tmp / "garbage.model"
  garbage.write_bytes(b"\x00not a sentencepiece model")
  no_cls = tmp / "no_cls"
  spm.SentencePieceTrainer.train(
      input=corpus,
      model_prefix=str(no_cls),
      vocab_size=300,
      minloglevel=2,
      num_threads=1,
  )
  good = [f"--input_file={corpus}", f"--spm_model_file={model}"]
  return {
      "missing_input": (
          ["--input_file=/nonexistent/*.txt", f"--spm_model_file={model}"],
          "input /nonexistent/*.txt matches no file",
      ),
      "empty_input": (
          [f"--input_file={empty}", f"--spm_model_file={model}"],
          "is empty",
      ),
      "blank_input": (
          [f"--input_file={blank}", f"--spm_model_file={model}"],
          "no examples",
      ),
      "not_utf8": (
          [f"--input_file={latin}", f"--spm_model_file={model}"],
          f"{latin}, line 4: not valid UTF-8",
      ),
      "missing_model": (
          [f"--input_file={corpus}", f"--spm_model_file={tmp}/none.model"],
          "cannot read SentencePiece model",
      ),
      "invalid_model": (
          [f"--input_file={corpus}", f"--spm_model_file={garbage}"],
          "is not a valid SentencePiece model",
      ),
      "model_without_cls": (
          [f"--input_file={corpus}", f"--spm_model_file={no_cls}.model"],
          "has no [CLS] piece",
      ),
      "short_sequence": (
          good + ["--max_seq_length=4"],
          "max_seq_length=4 is too small",
      ),
      "masked_lm_prob": (
          good + ["--masked_lm_prob=1.5"],
          "masked_lm_prob=1.5 must be a probability",
      ),
      "short_seq_prob": (
          good + ["--short_seq_prob=-0.1"],
          "short_seq_prob=-0.1 must be a probability",
      ),
      "task_conflict": (
          good + ["--random_next_sentence=True", "--sentence_task=sop"],
          "asks for NSP",
      ),
      "random_document_without_sop": (
          good + ["--single_segment=random_document", "--sentence_task=none"],
          "single_segment='random_document' labels its pairs 1",
      ),
      "shuffle_memory": (
          good + ["--shuffle_memory_mb=0"],
          "shuffle_memory_mb=0.0 must be > 0",
      ),
  }


def test_bad_input_gives_one_line_and_no_output(
    tmp_path, corpus_path, spm_model
):
  cases = _error_cases(tmp_path, corpus_path, spm_model)
  for name, (args, message) in cases.items():
    out = tmp_path / f"out_{name}"
    result = _cli(
        *args,
        f"--output_file={out}/train.tfrecord",
        "--dupe_factor=1",
        "--num_workers=1",
    )
    errors = [
        l
        for l in result.stderr.splitlines()
        if l.startswith("create_pretraining_data: error:")
    ]
    assert result.returncode != 0, name
    assert len(errors) == 1 and message in errors[0], (name, result.stderr)
    assert "Traceback" not in result.stderr, name
    assert not out.exists(), name


@pytest.mark.slow
def test_sigkill_then_rerun_gives_identical_bytes(
    tmp_path, corpus_path, spm_model
):
  import signal
  import time

  args = [
      f"--input_file={corpus_path}",
      f"--spm_model_file={spm_model}",
      "--max_seq_length=64",
      "--max_predictions_per_seq=10",
      "--dupe_factor=6",
      "--block_size_mb=0.05",
      "--num_output_shards=3",
      "--num_workers=2",
  ]
  fresh = tmp_path / "fresh"
  assert _cli(*args, f"--output_file={fresh}/t.tfrecord").returncode == 0
  out = tmp_path / "killed"
  process = helpers.start(
      [TOOL, *args, f"--output_file={out}/t.tfrecord"],
      stdout=subprocess.DEVNULL,
      stderr=subprocess.DEVNULL,
  )
  deadline = time.time() + 120
  while time.time() < deadline and len(list(out.glob(".*/*.rec.json"))) < 4:
    time.sleep(0.05)
  process.send_signal(signal.SIGKILL)  # Workers follow their parent.
  process.wait()
  (staging,) = list(out.glob(".t.partial-*"))
  assert list(staging.glob("*.rec.json")) and not list(out.glob("*.tfrecord"))
  result = _cli(*args, f"--output_file={out}/t.tfrecord")
  assert result.returncode == 0, result.stderr[-2000:]
  for name in [f"t-{i:05d}-of-00003.tfrecord" for i in range(3)]:
    assert (out / name).read_bytes() == (fresh / name).read_bytes()
  assert not staging.exists()


@pytest.mark.slow
def test_memory_does_not_grow_with_the_corpus(tmp_path, corpus_path, spm_model):
  # The default (the original's random_document rule) keeps a pool of
  # random documents, bounded by document_pool_size, not by the corpus: a
  # pool both corpora fill.
  big = tmp_path / "big.txt"
  text = pathlib.Path(corpus_path).read_bytes()
  big.write_bytes(text * 10)
  script = (
      "import resource, sys\n"
      f"sys.path.insert(0, {str(REPO)!r})\n"
      "from albert.pretraining_data.data_config import PretrainingDataConfig\n"
      "from albert.pretraining_data.pipeline import create_pretraining_data\n"
      "if __name__ == '__main__':\n"
      "  create_pretraining_data(input_file=sys.argv[1],\n"
      "      output_file=sys.argv[2], spm_model_file=sys.argv[3],\n"
      "      config=PretrainingDataConfig(dupe_factor=3,\n"
      "                                   block_bytes=256 << 10,\n"
      "                                   document_pool_size=100),\n"
      "      num_workers=1, shuffle_memory_mb=2)\n"
      "  print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
  )
  peaks = []
  for corpus in (corpus_path, str(big)):
    result = helpers.run(
        [
            "-c",
            script,
            corpus,
            str(tmp_path / f"out{len(peaks)}" / "t.tfrecord"),
            spm_model,
        ],
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    peaks.append(int(result.stdout.split()[-1]) / 1024)  # MB
  assert peaks[1] - peaks[0] < 15, peaks


@pytest.mark.slow
def test_beam_pipeline_writes_the_same_examples(
    tmp_path, corpus_path, spm_model, reference
):
  pytest.importorskip(
      "apache_beam", reason="apache-beam is an optional dependency"
  )
  from albert.pretraining_data import beam_pipeline

  out = tmp_path / "beam"
  beam_pipeline.run(
      input_file=corpus_path,
      output_file=str(out / "train.tfrecord"),
      spm_model_file=spm_model,
      config=PretrainingDataConfig(**SMALL),
      num_output_shards=3,
      runner="DirectRunner",
  )
  # The same shards, byte for byte, and the same manifest.
  assert [
      p.read_bytes() for p in sorted(out.glob("train-*-of-00003.tfrecord"))
  ] == reference[1]
  manifest = json.loads((out / "manifest.json").read_text())
  for key in ("num_examples", "num_tokens", "shards", "mixing", "flags"):
    assert manifest[key] == reference[0][key], key
  # NSP: the random-document pool reaches the Beam workers as a side input.
  nsp = PretrainingDataConfig(**SMALL, sentence_task="nsp")
  local = _generate(
      tmp_path / "local_nsp",
      corpus_path,
      spm_model,
      shards=2,
      sentence_task="nsp",
  )
  beam_pipeline.run(
      input_file=corpus_path,
      output_file=str(tmp_path / "beam_nsp" / "train.tfrecord"),
      spm_model_file=spm_model,
      config=nsp,
      num_output_shards=2,
      runner="DirectRunner",
  )
  assert _shard_bytes(tmp_path / "beam_nsp") == _shard_bytes(
      tmp_path / "local_nsp"
  )
  assert local["sentence_label_1_fraction"] > 0.4


def test_staging_waits_for_a_killed_runs_last_writer(tmp_path):
  # A rerun can start while a worker of the killed run finishes its unit
  # (and removes its own temporary): the staging directory is cleared only
  # once that writer is gone, and what it removed meanwhile is no error.
  staging = StagingDirectory(str(tmp_path / ".t.partial-0"))
  os.makedirs(staging.path)
  unit = os.path.join(staging.path, "block-000001.000.rec.unsorted")
  writer = helpers.start(
      [
          "-c",
          "import os, sys, time; time.sleep(0.5); "
          "os.remove(f'{sys.argv[1]}.tmp-{os.getpid()}')",
          unit,
      ]
  )
  for name in (unit, os.path.join(staging.path, "block-000002.000.rec")):
    pathlib.Path(f"{name}.tmp-{writer.pid}").touch()
  staging.prepare()
  assert writer.poll() is not None  # it had ended before the clean-up
  assert not list(pathlib.Path(staging.path).glob("*.tmp-*"))
