"""make_strategy: every name, and the errors users see."""

import socket

import pytest
import tensorflow as tf

from official.distribute.strategy import make_strategy


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
