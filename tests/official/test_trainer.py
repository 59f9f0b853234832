"""The generic `Trainer` on a toy task: least squares on a fixed data set.

No ALBERT here: the trainer's own contract (global loss normalisation,
clipping, the optimizer step, gradient accumulation, resume, the model
directory's config check, evaluation) against numpy.
"""

import os

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from official.core import checkpoints
from official.core import model_config_file
from official.core.input_pipeline import resumable_batches
from official.core.seekable_stream import StreamPosition
from official.core.seekable_stream import seekable_stream
from official.core.task import Task
from official.core.trainer import NonFiniteLossError
from official.core.trainer import Trainer
from official.core.trainer_config import TrainerConfig
from official.distribute.strategy import make_strategy
from official.io import files
from official.optimization.optimizer_config import OptimizerConfig
from tests import helpers

NUM_FEATURES = 3
NUM_EXAMPLES = 64
_rng = np.random.default_rng(0)
FEATURES = _rng.standard_normal((NUM_EXAMPLES, NUM_FEATURES)).astype(np.float32)
TRUE_WEIGHTS = np.array([[1.5], [-2.0], [0.5]], np.float32)
TARGETS = FEATURES @ TRUE_WEIGHTS  # [N, 1], noise-free


class LinearModel(tf_keras.Model):
  """One weight vector, no bias, zeros at the start: batch["x"] -> [B, 1]."""

  def __init__(self):
    super().__init__()
    self.linear = tf_keras.layers.Dense(
        1, use_bias=False, kernel_initializer="zeros", name="linear"
    )

  def call(self, batch, training=False):
    del training
    return self.linear(batch["x"])


class LeastSquaresTask(Task):
  """y = x w; loss = sum((x w - y)^2) / examples in the global batch."""

  def __init__(self, global_batch_size=8, width=NUM_FEATURES):
    self.global_batch_size = global_batch_size
    self.width = width

  def build_model(self):
    model = LinearModel()
    model({"x": tf.zeros([1, NUM_FEATURES])})
    return model

  def build_inputs(
      self, input_context, *, training, batch_size, skip_examples=0
  ):
    data = tf.data.Dataset.from_tensor_slices({"x": FEATURES, "y": TARGETS})
    if input_context is not None:
      data = data.shard(
          input_context.num_input_pipelines, input_context.input_pipeline_id
      )
    if training:
      data = data.repeat().skip(skip_examples)
    return data.batch(batch_size, drop_remainder=True)

  def loss_totals(self, batch):
    return {"examples": tf.cast(tf.shape(batch["y"])[0], tf.float32)}

  def compute_loss(self, outputs, batch, totals):
    return {
        "loss": tf.reduce_sum((outputs - batch["y"]) ** 2) / totals["examples"]
    }

  def build_metrics(self):
    return [tf_keras.metrics.MeanSquaredError(name="mse")]

  def update_metrics(self, metrics, outputs, batch, losses=None):
    metrics[0].update_state(batch["y"], outputs)

  def has_eval_inputs(self):
    return True

  def model_config_dict(self):
    return {"width": self.width}


def _trainer(
    model_dir,
    *,
    task=None,
    strategy="default",
    steps=4,
    accumulation=1,
    lr=0.1,
    clip_norm=1.0,
    steps_per_loop=2,
    checkpoint_interval=2,
):
  task = task or LeastSquaresTask()
  return Trainer(
      task=task,
      strategy=make_strategy(strategy),
      optimizer_config=OptimizerConfig(
          name="adamw",
          learning_rate=lr,
          warmup_steps=0,
          decay_steps=100000,
          weight_decay_rate=0.0,
      ),
      config=TrainerConfig(
          train_steps=steps,
          steps_per_loop=steps_per_loop,
          checkpoint_interval=checkpoint_interval,
          eval_steps=4,
          gradient_accumulation_steps=accumulation,
          clip_norm=clip_norm,
          deterministic=True,
          seed=1,
      ),
      model_dir=str(model_dir),
  )


def _weights(trainer):
  return trainer.model.linear.kernel.numpy()


def test_one_step_is_clipped_adam_on_the_global_mean_loss(tmp_path):
  trainer = _trainer(tmp_path, steps=1, steps_per_loop=1)
  trainer.train()
  # numpy: the first batch, gradient of the mean squared error at w = 0,
  # clipped to global norm 1, then one Adam step without bias correction.
  x, y = FEATURES[:8], TARGETS[:8]
  grad = 2.0 / 8 * x.T @ (x @ np.zeros((3, 1)) - y)
  grad = grad / max(1.0, np.linalg.norm(grad))
  m, v = 0.1 * grad, 0.001 * grad**2
  want = -0.1 * m / (np.sqrt(v) + 1e-6)
  np.testing.assert_allclose(_weights(trainer), want, rtol=1e-5)


def test_training_fits_the_least_squares_solution(tmp_path):
  trainer = _trainer(
      tmp_path, steps=300, steps_per_loop=100, lr=0.05, checkpoint_interval=100
  )
  results = trainer.train()
  np.testing.assert_allclose(_weights(trainer), TRUE_WEIGHTS, atol=0.05)
  assert results["mse"] < 1e-2
  # One train log per loop, and the loss went down.
  losses = [values["loss"] for _, values in trainer.train_history]
  assert len(losses) == 3 and losses[-1] < losses[0] / 10


def test_accumulation_makes_the_same_update(tmp_path):
  # Replicas are covered by tests/official/test_clipped_update.py and the
  # pretraining tests; a second MirroredStrategy in one test process can
  # collide with their collective keys, so this test stays on one device.
  single = _trainer(tmp_path / "one", steps=3)
  single.train()
  split = _trainer(tmp_path / "two", accumulation=4, steps=3)
  assert split.micro_batch_size == 2
  split.train()
  np.testing.assert_allclose(_weights(split), _weights(single), rtol=1e-5)


def test_resume_continues_bit_exactly(tmp_path):
  straight = _trainer(tmp_path / "straight", steps=4)
  straight.train()
  _trainer(tmp_path / "resumed", steps=2).train()
  resumed = _trainer(tmp_path / "resumed", steps=4)
  resumed.train()
  assert resumed.global_step == 4
  np.testing.assert_array_equal(_weights(resumed), _weights(straight))
  assert tf.train.latest_checkpoint(str(tmp_path / "resumed")).endswith(
      "ckpt-4"
  )


class NanTask(LeastSquaresTask):
  """The targets of the batch of step `bad_step` are NaN."""

  def __init__(self, bad_step):
    super().__init__()
    self.bad_step = bad_step

  def build_inputs(
      self, input_context, *, training, batch_size, skip_examples=0
  ):
    targets = TARGETS.copy()
    first = (self.bad_step - 1) * batch_size
    targets[first : first + batch_size] = np.nan
    data = tf.data.Dataset.from_tensor_slices({"x": FEATURES, "y": targets})
    return data.repeat().skip(skip_examples).batch(batch_size, True)


def test_a_non_finite_loss_inside_a_loop_stops_with_its_step(tmp_path):
  trainer = _trainer(
      tmp_path,
      task=NanTask(bad_step=7),
      steps=12,
      steps_per_loop=4,
      checkpoint_interval=4,
  )
  with pytest.raises(
      NonFiniteLossError,
      match=r"^non-finite loss at step 7: training stopped; last good "
      rf"checkpoint kept: {tmp_path}/ckpt-4$",
  ):
    trainer.train()
  assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-4")
  assert not [n for n in os.listdir(tmp_path) if n.startswith("ckpt-8")]


_PY_FUNCS = ("PyFunc", "PyFuncStateless", "EagerPyFunc")


def test_the_loop_never_waits_on_a_step(tmp_path):
  """The compiled loop's graph: no Python callback, and its condition reads
  nothing but its counters (no loss, no flag a step computes: the host
  queues step n + 1 before step n has finished)."""
  trainer = _trainer(tmp_path, steps=4, steps_per_loop=2)
  iterator = trainer.train_iterator()
  trainer.run_steps(iterator, 2)
  graph = trainer._train_loop.get_concrete_function(  # pylint: disable=protected-access
      iterator, tf.constant(2)
  ).graph.as_graph_def()
  functions = {f.signature.name: f for f in graph.library.function}
  nodes = list(graph.node) + [n for f in functions.values() for n in f.node_def]
  assert not [n.name for n in nodes if n.op in _PY_FUNCS]
  loops = [n for n in nodes if n.op in ("While", "StatelessWhile")]
  assert len(loops) == 1
  (loop,) = loops
  # Loop variables: int32 counters and resource handles only; a loss sum
  # or a stop flag would be a float or bool carried from step to step.
  carried = set(loop.attr["T"].list.type)
  assert carried <= {tf.int32.as_datatype_enum, tf.resource.as_datatype_enum}
  cond = functions[loop.attr["cond"].func.name]
  args = {a.name: a.type for a in cond.signature.input_arg}
  read = {i.split(":")[0] for n in cond.node_def for i in n.input}
  assert {args[a] for a in read & set(args)} == {tf.int32.as_datatype_enum}


def test_model_dir_of_another_model_is_refused(tmp_path):
  trainer = _trainer(tmp_path, steps=1, steps_per_loop=1)
  assert model_config_file.read(str(tmp_path)) is None  # nothing before
  trainer.train()  # ... the first checkpoint
  assert model_config_file.read(str(tmp_path)) == {"width": NUM_FEATURES}
  with pytest.raises(
      ValueError,
      match=r"holds a different model \(width: "
      r"3 -> 4\); use a new --model_dir",
  ):
    _trainer(tmp_path, task=LeastSquaresTask(width=4))


def test_batch_must_split_over_replicas_and_accumulation(tmp_path):
  with pytest.raises(
      ValueError,
      match=r"global_batch_size=12 must be "
      r"divisible by replicas \(2\) x "
      r"gradient_accumulation_steps \(4\)",
  ):
    _trainer(
        tmp_path,
        task=LeastSquaresTask(global_batch_size=12),
        strategy="mirrored",
        accumulation=4,
    )


def test_temporaries_of_a_killed_run_are_gone_after_the_rerun(tmp_path):
  # A run killed (kill -9) while writing its config files leaves their
  # temporaries; the rerun removes them whether or not it writes the file.
  process = helpers.start(["-c", "pass"])
  process.wait()
  tmp_path.mkdir(exist_ok=True)
  for name in ("operative_config.gin", "model_config.json", "other.txt"):
    (tmp_path / f"{name}.tmp-{process.pid}").write_text("half")
  _trainer(tmp_path, steps=2).train()
  names = os.listdir(tmp_path)
  assert "model_config.json" in names
  assert not [n for n in names if ".tmp" in n], names


def test_old_checkpoints_are_unlisted_before_their_files_go(
    tmp_path, monkeypatch
):
  # A kill while the oldest checkpoint is deleted (here: the first removal
  # raises) must leave a state file that names only whole checkpoints.
  manager = checkpoints.StateFirstCheckpointManager(
      tf.train.Checkpoint(v=tf.Variable(1.0)), str(tmp_path), max_to_keep=1
  )
  manager.save(checkpoint_number=1)

  def killed(path):
    raise KeyboardInterrupt(f"killed while deleting {path}")

  monkeypatch.setattr(files, "remove", killed)
  with pytest.raises(KeyboardInterrupt):
    manager.save(checkpoint_number=2)
  state = tf.train.get_checkpoint_state(str(tmp_path))
  listed = [os.path.basename(p) for p in state.all_model_checkpoint_paths]
  assert listed == ["ckpt-2"]
  assert (tmp_path / "ckpt-1.index").exists()  # deleted only after that


class Float16Task(LeastSquaresTask):
  """The least-squares task under mixed_float16: the model computes in
  float16, the loss in float32. Targets are a tenth of TARGETS, so that the
  scaled gradients fit in float16 at the initial loss scale (2^15); the first
  batch's are also multiplied by `blow_up`: at 1000 its gradients overflow,
  as a real overflow would."""

  def __init__(self, blow_up=1.0):
    super().__init__()
    self.blow_up = blow_up

  def build_inputs(
      self, input_context, *, training, batch_size, skip_examples=0
  ):
    targets = TARGETS / 10
    targets[:batch_size] *= self.blow_up
    data = tf.data.Dataset.from_tensor_slices({"x": FEATURES, "y": targets})
    if training:
      data = data.repeat().skip(skip_examples)
    return data.batch(batch_size, drop_remainder=True)

  def compute_loss(self, outputs, batch, totals):
    return super().compute_loss(tf.cast(outputs, tf.float32), batch, totals)

  def update_metrics(self, metrics, outputs, batch, losses=None):
    super().update_metrics(metrics, tf.cast(outputs, tf.float32), batch, losses)


def _float16_trainer(model_dir, blow_up, steps):
  return Trainer(
      task=Float16Task(blow_up),
      strategy=make_strategy("default"),
      optimizer_config=OptimizerConfig(
          name="adamw",
          learning_rate=0.1,
          warmup_steps=0,
          decay_steps=1000,
          weight_decay_rate=0.0,
      ),
      config=TrainerConfig(
          train_steps=steps,
          steps_per_loop=1,
          checkpoint_interval=1,
          eval_steps=4,
          seed=1,
          mixed_precision_policy="mixed_float16",
      ),
      model_dir=str(model_dir),
  )


@pytest.fixture
def _float32_after():
  yield
  tf_keras.mixed_precision.set_global_policy("float32")


@pytest.mark.parametrize("blow_up", [1.0, 1000.0])
def test_mixed_float16_skips_an_overflowing_step(
    blow_up, tmp_path, _float32_after
):
  trainer = _float16_trainer(tmp_path, blow_up, steps=1)
  assert trainer.model.linear.compute_dtype == "float16"
  optimizer = trainer.optimizer
  assert optimizer.dynamic and float(optimizer.loss_scale) == 2.0**15
  trainer.train()
  first = _weights(trainer)
  if blow_up > 1:
    # Inf gradients: the step changed nothing and the scale halved.
    np.testing.assert_array_equal(first, np.zeros((3, 1)))
    assert float(optimizer.loss_scale) == 2.0**14
  else:
    assert np.all(first != 0) and float(optimizer.loss_scale) == 2.0**15
  # Resumed, the next steps train, at the scale the checkpoint kept (it
  # grows only after 2,000 finite steps).
  resumed = _float16_trainer(tmp_path, blow_up, steps=4)
  resumed.train()
  assert float(resumed.optimizer.loss_scale) == float(optimizer.loss_scale)
  weights = _weights(resumed)
  assert np.all(np.isfinite(weights)) and np.all(weights != first)
  losses = [v["loss"] for _, v in resumed.train_history]
  assert len(losses) == 3 and np.all(np.isfinite(losses))
  # The checkpoint holds float32 weights (float16 is only the computation).
  dtypes = tf.train.load_checkpoint(str(tmp_path)).get_variable_to_dtype_map()
  kernels = [k for k in dtypes if k.startswith("model/linear/kernel/")]
  assert kernels and all(dtypes[k] == tf.float32 for k in kernels), dtypes


@pytest.fixture(scope="module")
def row_files(tmp_path_factory):
  """The examples' row numbers in 8 files of 8 records."""
  root = tmp_path_factory.mktemp("rows")
  paths = []
  for f in range(8):
    paths.append(str(root / f"rows-{f}.tfrecord"))
    with tf.io.TFRecordWriter(paths[-1]) as writer:
      for row in range(f * 8, f * 8 + 8):
        writer.write(str(row).encode())
  return paths


class StreamTask(LeastSquaresTask):
  """The examples as a seekable stream; remembers how its training stream
  was resumed."""

  def __init__(self, files):
    super().__init__()
    self.files = files
    self.resumes = []

  def build_inputs(
      self, input_context, *, training, batch_size, skip_examples=0, start=None
  ):
    if not training:
      return super().build_inputs(
          input_context, training=False, batch_size=batch_size
      )
    self.resumes.append((skip_examples, start))
    stream = seekable_stream(
        self.files,
        read_group=tf.data.TFRecordDataset,
        group_size=3,
        window_size=5,
        expand=lambda records, _: {
            "row": tf.strings.to_number(records, tf.int32)
        },
        training=True,
        seed=3,
        start=start,
    )

    def parse(batch):
      return {
          "x": tf.gather(FEATURES, batch["row"]),
          "y": tf.gather(TARGETS, batch["row"]),
      }

    return resumable_batches(
        stream,
        parse=parse,
        batch_size=batch_size,
        training=True,
        skip_examples=skip_examples,
    )


def test_a_resume_starts_at_the_checkpointed_input_position(
    row_files, tmp_path
):
  # 9 steps of 8 pass the epoch of 64. One device: a second
  # MirroredStrategy in a test process can collide with the collective keys
  # of an earlier one (several replicas' rows: test_seekable_stream, and
  # test_run_pretraining's two workers).
  def trainer(name, steps, task):
    return _trainer(
        tmp_path / name,
        task=task,
        steps=steps,
        checkpoint_interval=9,
        steps_per_loop=3,
    )

  straight = trainer("straight", 13, StreamTask(row_files))
  straight.train()
  trainer("resumed", 9, StreamTask(row_files)).train()
  saved = tf.train.load_checkpoint(str(tmp_path / "resumed")).get_tensor(
      "input_position/.ATTRIBUTES/VARIABLE_VALUE"
  )
  assert saved.shape == (1, 5) and saved[0, 0] == 0
  task = StreamTask(row_files)
  resumed = trainer("resumed", 13, task)
  resumed.train()
  skip, start = task.resumes[0]
  assert skip == 0 and start == StreamPosition.of_pipeline(saved, 0)
  assert start.epoch == 1
  np.testing.assert_array_equal(_weights(resumed), _weights(straight))
  # A checkpoint without positions (from before them) restores, and the
  # run resumes by skipping what was consumed: the same weights.
  old = trainer("old", 9, StreamTask(row_files))
  old.train()
  tf.train.Checkpoint(model=old.model, optimizer=old.optimizer).write(
      str(tmp_path / "old" / "ckpt-9")
  )
  task = StreamTask(row_files)
  again = trainer("old", 13, task)
  again.train()
  assert task.resumes[0] == (9 * 8, None)
  np.testing.assert_array_equal(_weights(again), _weights(straight))
