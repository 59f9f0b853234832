"""make_strategy: every name, and the errors users see."""

import socket

import pytest
import tensorflow as tf

from official.distribute.strategy import check_setup
from official.distribute.strategy import make_strategy
from official.errors import InputError


def test_default_and_one_device():
  assert make_strategy("default") is tf.distribute.get_strategy()
  one = make_strategy("one_device")
  assert isinstance(one, tf.distribute.OneDeviceStrategy)
  assert one.num_replicas_in_sync == 1


def test_mirrored_uses_every_logical_cpu():
  strategy = make_strategy("mirrored")
  assert isinstance(strategy, tf.distribute.MirroredStrategy)
  assert strategy.num_replicas_in_sync == 2  # tests/conftest.py makes two
  per_replica = strategy.run(
      lambda: tf.cast(
          tf.distribute.get_replica_context().replica_id_in_sync_group,
          tf.float32,
      )
      + 1.0
  )
  total = strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)
  assert float(total) == 3.0


def test_multi_worker_without_tf_config_is_single_worker(monkeypatch):
  monkeypatch.delenv("TF_CONFIG", raising=False)
  strategy = make_strategy("multi_worker")
  assert isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy)


def test_unknown_name():
  with pytest.raises(ValueError, match=r"strategy='gpu' is not one of"):
    make_strategy("gpu")


def test_tpu_needs_an_address():
  with pytest.raises(ValueError, match=r"strategy='tpu' needs tpu="):
    make_strategy("tpu")


def test_tpu_flag_with_another_strategy():
  with pytest.raises(ValueError, match=r"only used with strategy='tpu'"):
    make_strategy("mirrored", tpu="my-tpu")


def test_unreachable_tpu_fails_fast_with_the_address():
  with socket.socket() as s:  # a loopback port that nothing listens on
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
  address = f"grpc://127.0.0.1:{port}"
  with pytest.raises(RuntimeError, match=f"cannot reach TPU at '{address}'"):
    make_strategy("tpu", tpu=address, connect_timeout_s=2.0)


def test_malformed_tpu_address():
  with pytest.raises(ValueError, match="must look like grpc://HOST:PORT"):
    make_strategy("tpu", tpu="grpc://nohostport")


def test_float16_on_a_tpu_is_refused_before_anything_runs():
  with pytest.raises(
      InputError,
      match=r"mixed_float16' is for GPUs; TPUs compute in bfloat16: use "
      r"'mixed_bfloat16' with --strategy=tpu$",
  ):
    check_setup("tpu", "local", mixed_precision_policy="mixed_float16")
  check_setup("mirrored", mixed_precision_policy="mixed_float16")  # a GPU's


@pytest.mark.parametrize("tpu", ["my-tpu", "grpc://10.0.0.2:8470"])
def test_a_remote_tpu_refuses_local_paths(tpu):
  paths = {
      "--model_dir": "gs://bucket/runs/base",
      "PretrainTask.train_file_pattern": "gs://b/a-*.tfrecord,data/b-*",
      "PretrainTask.init_checkpoint": None,
  }
  with pytest.raises(
      InputError,
      match=r"^PretrainTask.train_file_pattern=data/b-\*: the hosts of TPU "
      rf"'{tpu}' read and write the run's files and cannot reach this "
      r"machine's disk; put it on gs://",
  ):
    check_setup("tpu", tpu, paths=paths)
  # On gs:// every one: accepted; a TPU VM's own chips read local files.
  paths["PretrainTask.train_file_pattern"] = "gs://b/a-*.tfrecord"
  check_setup("tpu", tpu, paths=paths)
  check_setup("tpu", "local", paths={"--model_dir": "runs/base"})
