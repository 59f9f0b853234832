"""`python -m albert.run_pretraining` as users run it: errors, kill-and-resume,
and a two-worker MultiWorkerMirroredStrategy run on loopback ports."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from tests.albert.synthetic_records import write_records
from tests.conftest import VOCAB_SIZE
from tests import helpers


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
  root = tmp_path_factory.mktemp("cli_data")
  write_records(root / "train-0.tfrecord", 128, seed=0)
  write_records(root / "eval.tfrecord", 32, seed=5)
  return root


def _args(data_dir, model_dir, *extra, steps=8):
  params = [
      "AlbertConfig.vocab_size=64",
      "AlbertConfig.num_layers=2",
      "AlbertConfig.max_position_embeddings=32",
      f"PretrainTask.train_file_pattern='{data_dir}/train-*.tfrecord'",
      f"PretrainTask.eval_file_pattern='{data_dir}/eval.tfrecord'",
      "PretrainTask.seq_length=32",
      "PretrainTask.max_predictions_per_seq=5",
      "PretrainTask.global_batch_size=8",
      f"TRAIN_STEPS={steps}",
      "OptimizerConfig.warmup_steps=2",
      "TrainerConfig.steps_per_loop=1",
      "TrainerConfig.checkpoint_interval=2",
      "TrainerConfig.eval_interval=0",
      "TrainerConfig.eval_steps=2",
      "TrainerConfig.deterministic=True",
  ]
  # sys.executable first, not `-m`: test_faults execs these args as given.
  return (
      [
          sys.executable,
          "-m",
          "albert.run_pretraining",
          "--gin_file=gin/tiny.gin",
          f"--model_dir={model_dir}",
      ]
      + [f"--gin_param={p}" for p in params]
      + list(extra)
  )


def _variables(checkpoint_dir):
  reader = tf.train.load_checkpoint(str(checkpoint_dir))
  return {
      name: reader.get_tensor(name)
      for name in reader.get_variable_to_shape_map()
      if name.startswith("model/")
  }


@pytest.mark.slow
def test_missing_train_files_and_bad_gin_are_one_line(tmp_path):
  run = helpers.run(
      [
          "-m",
          "albert.run_pretraining",
          "--gin_file=gin/tiny.gin",
          f"--model_dir={tmp_path}/m",
      ]
  )
  assert run.returncode != 0
  assert (
      run.stderr.strip()
      .splitlines()[-1]
      .startswith(
          "run_pretraining: error: PretrainTask.train_file_pattern is "
          "required"
      )
  )
  run = helpers.run(
      [
          "-m",
          "albert.run_pretraining",
          "--gin_file=gin/tiny.gin",
          f"--model_dir={tmp_path}/m",
          f"--gin_param=PretrainTask.train_file_pattern='{tmp_path}/x-*'",
      ]
  )
  assert run.returncode != 0
  assert "matches no files" in run.stderr.strip().splitlines()[-1]
  run = helpers.run(
      [
          "-m",
          "albert.run_pretraining",
          "--gin_file=gin/tiny.gin",
          f"--model_dir={tmp_path}/m",
          "--gin_param=TrainerConfig.stepz=3",
      ]
  )
  assert run.returncode != 0
  assert run.stderr.strip().splitlines()[-1] == (
      "run_pretraining: error: gin binding 'TrainerConfig.stepz=3': "
      "Configurable 'TrainerConfig' doesn't have a parameter named 'stepz'."
  )
  assert not os.path.exists(tmp_path / "m" / "checkpoint")


@pytest.fixture(scope="module")
def documents_dir(tmp_path_factory, corpus_path, spm_model):
  """The sample corpus in the documents format (paired and masked as read)."""
  from albert.pretraining_data.data_config import PretrainingDataConfig
  from albert.pretraining_data.pipeline import create_pretraining_data

  root = tmp_path_factory.mktemp("cli_documents")
  create_pretraining_data(
      input_file=corpus_path,
      output_file=str(root / "train.tfrecord"),
      spm_model_file=spm_model,
      config=PretrainingDataConfig(output_format="documents", dupe_factor=1),
      num_output_shards=2,
  )
  return root


def _straight(args, model_dir):
  """`args(model_dir)` run to the end, uninterrupted: what an interrupted
  run of the same steps must end at."""
  run = helpers.run(args(model_dir))
  assert run.returncode == 0, run.stderr[-2000:]
  assert os.path.exists(model_dir / "operative_config.gin")
  return model_dir


@pytest.fixture(scope="module")
def straight_examples(data_dir, tmp_path_factory):
  """40 uninterrupted steps of the examples data, shared by the tests that
  interrupt the same run (the checkpoint interval changes no weight)."""
  return _straight(
      lambda d: _args(data_dir, d, steps=40),
      tmp_path_factory.mktemp("straight") / "model",
  )


@pytest.mark.slow
@pytest.mark.parametrize("data_format", ["examples", "documents"])
def test_kill_and_resume_gives_the_uninterrupted_weights(
    data_dir, tmp_path, data_format, request
):
  extra = []
  if data_format == "documents":
    docs = request.getfixturevalue("documents_dir")
    extra = [
        f"--gin_param={p}"
        for p in (
            f"PretrainTask.train_file_pattern='{docs}/train-*.tfrecord'",
            "PretrainTask.input_format='documents'",
            "PretrainTask.eval_input_format='examples'",
            f"AlbertConfig.vocab_size={VOCAB_SIZE}",
        )
    ]

  def args(model_dir):
    return _args(data_dir, model_dir, *extra, steps=40)

  straight = (
      _straight(args, tmp_path / "straight")
      if extra
      else request.getfixturevalue("straight_examples")
  )

  model_dir = tmp_path / "killed"
  proc = helpers.start(
      args(model_dir),
      stdout=subprocess.DEVNULL,
      stderr=subprocess.DEVNULL,
  )
  deadline = time.time() + 300
  while not os.path.exists(model_dir / "ckpt-8.index"):
    assert proc.poll() is None and time.time() < deadline, "no checkpoint"
    time.sleep(0.01)
  proc.send_signal(signal.SIGKILL)
  proc.wait()
  assert proc.returncode == -signal.SIGKILL
  assert not os.path.exists(model_dir / "ckpt-40.index")  # killed mid-way
  resumed = helpers.run(args(model_dir))
  assert resumed.returncode == 0, resumed.stderr[-2000:]
  assert "Resumed from" in resumed.stderr
  # At the checkpoint's input position, not by re-reading the stream.
  assert "Input pipeline 0 resumes at epoch " in resumed.stderr
  a, b = _variables(straight), _variables(model_dir)
  position = "input_position/.ATTRIBUTES/VARIABLE_VALUE"
  np.testing.assert_array_equal(
      *(
          tf.train.load_checkpoint(str(d)).get_tensor(position)
          for d in (straight, model_dir)
      )
  )
  assert a.keys() == b.keys() and len(a) > 10
  for name in a:
    np.testing.assert_array_equal(a[name], b[name], err_msg=name)


@pytest.mark.slow
def test_sigterm_saves_the_step_in_flight_and_the_rerun_resumes_bit_exact(
    data_dir, straight_examples, tmp_path
):
  # No periodic checkpoint: what the rerun resumes from is the signal's.
  def args(model_dir):
    return _args(
        data_dir,
        model_dir,
        "--gin_param=TrainerConfig.checkpoint_interval=1000",
        steps=40,
    )

  model_dir = tmp_path / "preempted"
  proc = helpers.start(
      args(model_dir), stderr=subprocess.PIPE, text=True, bufsize=1
  )
  seen = []
  for line in proc.stderr:  # wait until it trains
    seen.append(line)
    if " train 3/40 steps" in line:
      break
  else:
    pytest.fail("".join(seen[-30:]))
  sent = time.time()
  proc.send_signal(signal.SIGTERM)
  stderr = proc.communicate(timeout=120)[1]
  assert time.time() - sent < 30  # within the default grace period
  assert proc.returncode == 75, stderr[-3000:]
  last = stderr.strip().splitlines()[-1]
  prefix = "run_pretraining: stopped: stopped by SIGTERM at step "
  assert last.startswith(prefix) and "Traceback" not in stderr, last
  step = int(last[len(prefix) :].split(",")[0])
  assert 3 <= step < 40
  assert last.endswith(
      f", checkpoint {model_dir}/ckpt-{step} saved: run the same command "
      "again to resume"
  ), last
  assert os.path.exists(model_dir / "operative_config.gin")
  assert not os.path.exists(model_dir / ".lock")  # released
  resumed = helpers.run(args(model_dir))
  assert resumed.returncode == 0, resumed.stderr[-2000:]
  assert f"Resumed from {model_dir}/ckpt-{step} at step {step}" in (
      resumed.stderr
  )
  a, b = _variables(straight_examples), _variables(model_dir)
  assert a.keys() == b.keys() and len(a) > 10
  for name in a:
    np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def _start_two_workers(data_dir, model_dir, *extra, steps, **popen):
  """Both workers of a MultiWorkerMirroredStrategy run on loopback ports."""
  ports = helpers.free_ports(2)
  cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
  args = _args(
      data_dir, model_dir, "--strategy=multi_worker", *extra, steps=steps
  )
  return [
      helpers.start(
          args,
          env=dict(
              helpers.ENV,
              TF_CONFIG=json.dumps(
                  {"cluster": cluster, "task": {"type": "worker", "index": i}}
              ),
          ),
          **popen,
      )
      for i in range(2)
  ]


@pytest.mark.slow
def test_two_workers_agree_with_one(data_dir, tmp_path):
  # A shuffle buffer of 1 keeps the order, so both runs see the same global
  # batches: the workers split every batch of 8 by example.
  extra = ["--gin_param=PretrainTask.shuffle_buffer_size=1"]
  single = helpers.run(_args(data_dir, tmp_path / "single", *extra, steps=4))
  assert single.returncode == 0, single.stderr[-2000:]

  model_dir = tmp_path / "multi"
  procs = _start_two_workers(
      data_dir,
      model_dir,
      *extra,
      steps=4,
      stdout=subprocess.PIPE,
      stderr=subprocess.PIPE,
      text=True,
  )
  outputs = [p.communicate(timeout=600) for p in procs]
  for p, (_, err) in zip(procs, outputs):
    assert p.returncode == 0, err[-3000:]
  assert "2 replica(s) in sync" in outputs[0][1]
  # The worker's own checkpoint copies went with it.
  assert not [n for n in os.listdir(model_dir) if n.startswith(".scratch")]
  a, b = _variables(tmp_path / "single"), _variables(model_dir)
  assert a.keys() == b.keys()
  for name in a:
    np.testing.assert_allclose(
        a[name], b[name], rtol=1e-4, atol=1e-5, err_msg=name
    )


@pytest.mark.slow
def test_sigterm_to_one_worker_stops_both_at_the_same_step(data_dir, tmp_path):
  """Only the non-chief worker is signalled: the two agree on the step,
  save it together (saving is collective) and both exit 75."""
  model_dir = tmp_path / "multi"
  procs = _start_two_workers(
      data_dir,
      model_dir,
      "--gin_param=TrainerConfig.checkpoint_interval=1000",
      steps=400,
      stderr=subprocess.PIPE,
      text=True,
      bufsize=1,
  )
  seen = []
  for line in procs[1].stderr:  # the worker trains
    seen.append(line)
    if " train 3/400 steps" in line:
      break
  else:
    pytest.fail("".join(seen[-30:]))
  procs[1].send_signal(signal.SIGTERM)
  errs = [p.communicate(timeout=300)[1] for p in procs]
  for p, err in zip(procs, errs):
    assert p.returncode == 75, err[-3000:]
  lines = [e.strip().splitlines()[-1] for e in errs]
  step = int(lines[1].split(" at step ")[1].split(",")[0])
  assert lines[1].startswith("run_pretraining: stopped: stopped by SIGTERM")
  assert lines[0].startswith(
      "run_pretraining: stopped: stopped by a signal to another worker at "
      f"step {step}, checkpoint {model_dir}/ckpt-{step} saved"
  ), lines[0]
  assert tf.train.latest_checkpoint(str(model_dir)).endswith(f"ckpt-{step}")
  assert not [n for n in os.listdir(model_dir) if n.startswith(".")]
  # Where each worker's input stream goes on (a resume starts there).
  rows = tf.train.load_checkpoint(str(model_dir)).get_tensor(
      "input_position/.ATTRIBUTES/VARIABLE_VALUE"
  )
  assert sorted(rows[:, 0]) == [0, 1] and (rows >= 0).all()


@pytest.mark.slow
def test_eval_mode_evaluates_the_latest_checkpoint_only(data_dir, tmp_path):
  model_dir = tmp_path / "model"
  metrics = tmp_path / "train.json"
  result = helpers.run(
      _args(data_dir, model_dir, f"--metrics_file={metrics}", steps=4)
  )
  assert result.returncode == 0, result.stderr[-2000:]
  trained = json.loads(metrics.read_text())
  assert trained["checkpoint"].endswith("ckpt-4")
  before = sorted(p.name for p in model_dir.iterdir())
  # Another held-out set, evaluated without training: same weights, same
  # checkpoints, its own summaries; on the training eval set, the figures
  # of the training run's final evaluation.
  other = tmp_path / "other.json"
  for name, out in (("eval_again", other),):
    result = helpers.run(
        _args(
            data_dir,
            model_dir,
            "--mode=eval",
            f"--eval_name={name}",
            f"--metrics_file={out}",
            steps=4,
        )
    )
    assert result.returncode == 0, result.stderr[-2000:]
  again = json.loads(other.read_text())
  assert again["checkpoint"] == trained["checkpoint"]
  for key in ("masked_lm_accuracy", "sentence_order_accuracy"):
    assert again["metrics"][key] == pytest.approx(trained["metrics"][key])
  after = sorted(p.name for p in model_dir.iterdir())
  assert after == sorted(before + ["eval_again"])
  assert list((model_dir / "eval_again").iterdir())
  # Nothing to evaluate: one line.
  result = helpers.run(
      _args(data_dir, tmp_path / "empty", "--mode=eval", steps=4)
  )
  assert result.returncode != 0
  assert "no checkpoint in" in result.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_helpshort_lists_the_command_flags():
  # The flags live in albert/cli/, the process starts from
  # albert/run_pretraining.py or tools/ (absl's help exits with status 1).
  for command, flag in (
      (["-m", "albert.run_pretraining"], "--model_dir: "),
      ([helpers.tool("demo")], "--train_steps: "),
  ):
    run = helpers.run([*command, "--helpshort"], timeout=300)
    assert flag in run.stdout and "--[no]verbose" in run.stdout, run.stdout


@pytest.mark.slow
def test_tpu_setups_that_cannot_run_are_refused_before_any_work(
    data_dir, tmp_path
):
  model_dir = tmp_path / "model"
  run = helpers.run(
      _args(data_dir, model_dir, "--strategy=tpu", "--tpu=my-tpu")
  )
  helpers.assert_one_line(
      run,
      "run_pretraining",
      f"--model_dir={model_dir}: the hosts of TPU 'my-tpu' read and write",
      "put it on gs://",
  )
  run = helpers.run(
      _args(
          data_dir,
          model_dir,
          "--strategy=tpu",
          "--tpu=local",
          "--gin_param=TrainerConfig.mixed_precision_policy='mixed_float16'",
      )
  )
  helpers.assert_one_line(run, "run_pretraining", "use 'mixed_bfloat16'")
  run = helpers.run(
      [
          "-m",
          "albert.run_finetuning",
          "--gin_file=gin/finetune/rte.gin",
          "--gin_file=gin/tiny.gin",
          "--model_dir=gs://bucket/rte",
          f"--data_dir={data_dir}",
          "--init_checkpoint=gs://bucket/base",
          "--strategy=tpu",
          "--tpu=grpc://10.0.0.2:8470",
      ]
  )
  helpers.assert_one_line(
      run, "run_finetuning", f"--data_dir={data_dir}: the hosts of TPU"
  )
  assert not model_dir.exists()
