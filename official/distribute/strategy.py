"""`make_strategy`: the only place where a `tf.distribute.Strategy` is built;
`run`: the only call of `strategy.run`.

Layers and tasks never build strategies; entry points call `make_strategy` with
the value of their `--strategy` / `--tpu` flags and run everything else inside
`strategy.scope()`. The trainer's steps and the replicated prediction
(`official.core.replicated`) call `run`.
"""

import os
import socket
from typing import Mapping, Optional
from urllib import parse

from absl import logging
import tensorflow as tf

from official.errors import InputError
from official.errors import UnavailableError
from official.errors import first_line

STRATEGY_NAMES = ("default", "one_device", "mirrored", "multi_worker", "tpu")


def is_remote_tpu(name: str, tpu: Optional[str]) -> bool:
  """A Cloud TPU reached over the network (a TPU name or grpc:// address),
  whose hosts run the input pipelines and write the checkpoints; not a TPU
  VM's own chips (`--tpu=local`)."""
  return name == "tpu" and bool(tpu) and tpu != "local"


def check_setup(
    name: str,
    tpu: Optional[str] = None,
    *,
    mixed_precision_policy: str = "float32",
    paths: Mapping[str, Optional[str]] = (),
) -> None:
  """Refuses, before a strategy is built and anything is read, a setup the
  strategy cannot run, in one line.

  Args:
    name, tpu: the `--strategy` and `--tpu` flags.
    mixed_precision_policy: `TrainerConfig.mixed_precision_policy`.
    paths: what each path is (a flag or gin name) -> the path (or
      comma-separated patterns; None: not given).

  Raises:
    InputError: float16 on a TPU; a local path with a remote TPU, whose
      hosts cannot read it.
  """
  if name == "tpu" and mixed_precision_policy == "mixed_float16":
    raise InputError(
        "TrainerConfig.mixed_precision_policy='mixed_float16' is for GPUs; "
        "TPUs compute in bfloat16: use 'mixed_bfloat16' with --strategy=tpu"
    )
  if not is_remote_tpu(name, tpu):
    return
  for what, value in dict(paths).items():
    for path in (p.strip() for p in (value or "").split(",")):
      if path and not path.startswith("gs://"):
        raise InputError(
            f"{what}={path}: the hosts of TPU {tpu!r} read and write the run's "
            "files and cannot reach this machine's disk; put it on gs:// (a "
            "bucket the TPU's service account can use), or run on a TPU VM "
            "with --tpu=local"
        )


def make_strategy(
    name: str, tpu: Optional[str] = None, connect_timeout_s: float = 10.0
) -> tf.distribute.Strategy:
  """Builds the distribution strategy called `name`.

  Args:
    name: one of
      `default`: TensorFlow's default strategy (whatever device TF picks);
      `one_device`: the first GPU, else the CPU;
      `mirrored`: synchronous data parallelism over the local GPUs (or over
        the logical CPU devices when there is no GPU);
      `multi_worker`: `MultiWorkerMirroredStrategy`, cluster from `TF_CONFIG`;
      `tpu`: `TPUStrategy` on the TPU given by `tpu`.
    tpu: with `tpu` only: a Cloud TPU name, a `grpc://host:port` address, or
      `local` for a TPU VM.
    connect_timeout_s: how long to wait for a `grpc://` TPU address to accept
      a connection before failing.

  Returns:
    The strategy.

  Raises:
    ValueError: unknown `name`, or `tpu` given / missing where it does not fit.
    UnavailableError: (a RuntimeError) the TPU cannot be reached or
      initialised.
  """
  if name not in STRATEGY_NAMES:
    raise ValueError(f"strategy={name!r} is not one of {STRATEGY_NAMES}")
  if name != "tpu" and tpu:
    raise ValueError(
        f"tpu={tpu!r} is only used with strategy='tpu', "
        f"not strategy={name!r}"
    )
  if name == "default":
    strategy = tf.distribute.get_strategy()
  elif name == "one_device":
    device = "/gpu:0" if tf.config.list_logical_devices("GPU") else "/cpu:0"
    strategy = tf.distribute.OneDeviceStrategy(device)
  elif name == "mirrored":
    devices = [d.name for d in tf.config.list_logical_devices("GPU")]
    devices = devices or [d.name for d in tf.config.list_logical_devices("CPU")]
    strategy = tf.distribute.MirroredStrategy(devices)
  elif name == "multi_worker":
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
  else:
    strategy = _make_tpu_strategy(tpu, connect_timeout_s)
  logging.info(
      "Strategy %s with %d replica(s) in sync.",
      name,
      strategy.num_replicas_in_sync,
  )
  return strategy


def _make_tpu_strategy(tpu: Optional[str], connect_timeout_s: float):
  if not tpu:
    raise ValueError(
        "strategy='tpu' needs tpu=NAME, grpc://HOST:PORT or "
        "'local' (flag --tpu)"
    )
  if tpu.startswith("grpc://"):
    _check_reachable(tpu, connect_timeout_s)
  try:
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu)
    if tpu != "local":
      tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)
  except (ValueError, RuntimeError, tf.errors.OpError) as e:
    raise UnavailableError(
        f"cannot use TPU {tpu!r}: {first_line(e)}; check --tpu and "
        "that the TPU is up and reachable"
    ) from e


def _check_reachable(address: str, timeout_s: float) -> None:
  """Fails fast, with the address, when nothing listens at a grpc:// address."""
  parsed = parse.urlparse(address)
  if not parsed.hostname or not parsed.port:
    raise ValueError(f"tpu={address!r} must look like grpc://HOST:PORT")
  try:
    with socket.create_connection(
        (parsed.hostname, parsed.port), timeout=timeout_s
    ):
      pass
  except OSError as e:
    raise UnavailableError(
        f"cannot reach TPU at {address!r} ({e.strerror or e}); check --tpu and "
        "that the TPU is up and reachable"
    ) from e


def run(strategy: tf.distribute.Strategy, fn, args=()):
  """`strategy.run(fn, args)`: the package's only call of it."""
  return strategy.run(fn, args=args)


def chief_and_write_dir(strategy, model_dir: str):
  """(is this process the chief, where it writes checkpoints)."""
  resolver = getattr(strategy, "cluster_resolver", None)
  task_type = getattr(resolver, "task_type", None)
  if not task_type:
    return True, model_dir
  task_id = resolver.task_id or 0
  cluster = resolver.cluster_spec().as_dict()
  chief = task_type == "chief" or (
      task_type == "worker" and task_id == 0 and "chief" not in cluster
  )
  if chief:
    return True, model_dir
  return False, os.path.join(model_dir, f".scratch-{task_type}-{task_id}")
