"""The training stream of both data formats where it runs: 2 replicas of a
MirroredStrategy, and 2 workers of a MultiWorkerMirroredStrategy (each
reading its own files). Each in fresh processes (a strategy's devices are
fixed when TensorFlow starts); the streams are compared with the same
pipelines built in this process."""

import json
import subprocess

import numpy as np
import pytest
import tensorflow as tf

from albert.modeling.config import AlbertConfig
from albert.pretraining.task import PretrainTask
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.pipeline import create_pretraining_data
from tests import helpers
from tests.albert.synthetic_records import write_records

SEQ, PRED, BATCH, STEPS = 32, 5, 4, 3

# argv: mode ("mirrored" or "worker"), the .npz to write, the patterns
# (format -> files). Writes every replica's batches of 3 steps, twice.
_SCRIPT = (
    helpers.TWO_CPUS_SCRIPT
    + """
import numpy as np
from albert.modeling.config import AlbertConfig
from albert.pretraining.task import PretrainTask
from official.core import input_pipeline
mode, out, patterns = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
if mode == "mirrored":
  strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
else:
  strategy = tf.distribute.MultiWorkerMirroredStrategy()
arrays = {}
# The shuffles' op seeds combine with the global seed (the trainer sets it).
tf.random.set_seed(1)
for data_format, pattern in patterns.items():
  task = PretrainTask(
      train_file_pattern=pattern, input_format=data_format, seq_length=%d,
      max_predictions_per_seq=%d, model_config=AlbertConfig(vocab_size=2000),
      seed=3, shuffle_buffer_size=50)
  for run in range(2):
    iterator = iter(input_pipeline.distributed_dataset(
        strategy, task, batch_size=%d, training=True))
    for step in range(%d):
      batch = next(iterator)
      for name, value in batch.items():
        for r, v in enumerate(strategy.experimental_local_results(value)):
          arrays[f"{data_format}/{run}/{step}/{r}/{name}"] = v.numpy()
np.savez(out, **arrays)
"""
    % (SEQ, PRED, BATCH, STEPS)
)


@pytest.fixture(scope="module")
def patterns(tmp_path_factory, corpus_path, spm_model):
  """Two files of each format (the sample corpus as documents)."""
  root = tmp_path_factory.mktemp("strategies")
  for f in range(2):
    write_records(
        root / f"examples-{f}.tfrecord",
        64,
        seed=f,
        seq_length=SEQ,
        max_predictions=PRED,
    )
  create_pretraining_data(
      input_file=corpus_path,
      output_file=str(root / "docs" / "docs.tfrecord"),
      spm_model_file=spm_model,
      config=PretrainingDataConfig(output_format="documents", dupe_factor=1),
      num_output_shards=2,
  )
  return {
      "examples": str(root / "examples-*.tfrecord"),
      "documents": str(root / "docs" / "docs-*.tfrecord"),
  }


def _local_stream(pattern, data_format, context, batches):
  task = PretrainTask(
      train_file_pattern=pattern,
      input_format=data_format,
      seq_length=SEQ,
      max_predictions_per_seq=PRED,
      model_config=AlbertConfig(vocab_size=2000),
      seed=3,
      shuffle_buffer_size=50,
  )
  tf.random.set_seed(
      1
  )  # As the script (the shuffles' op seeds combine with it).
  dataset = task.build_inputs(context, training=True, batch_size=BATCH)
  return [{k: v.numpy() for k, v in b.items()} for b in dataset.take(batches)]


def _check_shapes_and_runs(arrays, data_format, replicas):
  """Static shapes, and the second build of the stream equal to the first."""
  for step in range(STEPS):
    for r in range(replicas):
      prefix = f"{data_format}/0/{step}/{r}/"
      names = [k[len(prefix) :] for k in arrays if k.startswith(prefix)]
      assert "input_word_ids" in names, names
      for name in names:
        first = arrays[prefix + name]
        assert first.shape[0] == BATCH, (name, first.shape)
        if name in ("input_word_ids", "input_mask", "token_boundary"):
          assert first.shape == (BATCH, SEQ), name
        if name.startswith("masked_lm"):
          assert first.shape == (BATCH, PRED), name
        np.testing.assert_array_equal(
            first, arrays[f"{data_format}/1/{step}/{r}/{name}"], err_msg=name
        )


@pytest.mark.slow
def test_two_replicas_take_the_one_pipeline_stream_in_turn(patterns, tmp_path):
  out = tmp_path / "mirrored.npz"
  run = helpers.run(["-c", _SCRIPT, "mirrored", str(out), json.dumps(patterns)])
  assert run.returncode == 0, run.stderr[-3000:]
  arrays = dict(np.load(out))
  for data_format, pattern in patterns.items():
    _check_shapes_and_runs(arrays, data_format, replicas=2)
    # One input pipeline feeds both replicas: batch 2s + r of its stream.
    local = _local_stream(pattern, data_format, None, 2 * STEPS)
    for step in range(STEPS):
      for r in range(2):
        for name, value in local[2 * step + r].items():
          np.testing.assert_array_equal(
              arrays[f"{data_format}/0/{step}/{r}/{name}"],
              value,
              err_msg=f"{data_format} {name} step {step} replica {r}",
          )


@pytest.mark.slow
def test_two_workers_each_read_their_own_files(patterns, tmp_path):
  cluster = {"worker": [f"127.0.0.1:{p}" for p in helpers.free_ports(2)]}
  procs = [
      helpers.start(
          ["-c", _SCRIPT, "worker", str(tmp_path / f"w{i}.npz")]
          + [json.dumps(patterns)],
          env=dict(
              helpers.ENV,
              TF_CONFIG=json.dumps(
                  {"cluster": cluster, "task": {"type": "worker", "index": i}}
              ),
          ),
          stdout=subprocess.PIPE,
          stderr=subprocess.PIPE,
          text=True,
      )
      for i in range(2)
  ]
  outputs = [p.communicate(timeout=600) for p in procs]
  for p, (_, err) in zip(procs, outputs):
    assert p.returncode == 0, err[-3000:]
  workers = [dict(np.load(tmp_path / f"w{i}.npz")) for i in range(2)]
  for data_format, pattern in patterns.items():
    for i, arrays in enumerate(workers):
      _check_shapes_and_runs(arrays, data_format, replicas=1)
      # Worker i is input pipeline i of 2: every other file.
      context = tf.distribute.InputContext(2, i, 2)
      local = _local_stream(pattern, data_format, context, STEPS)
      for step in range(STEPS):
        for name, value in local[step].items():
          np.testing.assert_array_equal(
              arrays[f"{data_format}/0/{step}/0/{name}"],
              value,
              err_msg=f"{data_format} worker {i} {name} step {step}",
          )
    ids = [w[f"{data_format}/0/0/0/input_word_ids"] for w in workers]
    assert not np.array_equal(ids[0], ids[1]), data_format
