"""The dev protocol (`official.core.best_checkpoint` in `Trainer`): a scripted
metric per step, so that which checkpoint is best, when training stops and
what a killed run resumes to are known in advance."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from official.core import best_checkpoint
from official.core.best_checkpoint import BestCheckpoint
from official.core.trainer import Trainer
from official.core.trainer_config import TrainerConfig
from official.distribute.strategy import make_strategy
from official.optimization.optimizer_config import OptimizerConfig
from tests.official.test_trainer import LeastSquaresTask

# The dev metric at each evaluated step (every 10 steps). 30 ties 20, which
# keeps 20 (the original's strict `>`); 50 beats it.
SCRIPT = {10: 0.5, 20: 0.7, 30: 0.7, 40: 0.6, 50: 0.9, 60: 0.8}


class Killed(Exception):
  """Stands for a kill during an evaluation."""


def _trainer(model_dir, *, steps=60, patience=0, kill_at=None, script=SCRIPT):
  trainer = None

  def evaluate(model):
    step = trainer.global_step
    if step == kill_at:
      raise Killed(step)
    weight = float(model.linear.kernel.numpy()[0, 0])
    return {"dev/m": script[step], "dev/w": weight}

  best = BestCheckpoint(
      str(model_dir), evaluate_fn=evaluate, metric="dev/m", patience=patience
  )
  trainer = Trainer(
      task=LeastSquaresTask(),
      strategy=make_strategy("default"),
      optimizer_config=OptimizerConfig(
          name="adamw",
          learning_rate=0.01,
          warmup_steps=0,
          decay_steps=1000,
          weight_decay_rate=0.0,
      ),
      config=TrainerConfig(
          train_steps=steps,
          steps_per_loop=5,
          checkpoint_interval=1000,  # only the evaluations save
          max_checkpoints=10,
          eval_interval=10,
          deterministic=True,
          seed=1,
      ),
      model_dir=str(model_dir),
      best_checkpoint=best,
  )
  return trainer


def _kernel(prefix):
  return tf.train.load_variable(
      prefix, "model/linear/kernel/.ATTRIBUTES/VARIABLE_VALUE"
  )


def _steps(model_dir):
  return [e["step"] for e in best_checkpoint.read_history(str(model_dir))]


def test_the_best_is_kept_by_a_strictly_greater_value(tmp_path):
  trainer = _trainer(tmp_path)
  results = trainer.train()
  assert _steps(tmp_path) == [10, 20, 30, 40, 50, 60]
  history = best_checkpoint.read_history(str(tmp_path))
  assert [e["dev/m"] for e in history] == [SCRIPT[s] for s in range(10, 61, 10)]
  assert results == pytest.approx(
      {"dev/m": 0.9, "dev/w": history[4]["dev/w"], "best_checkpoint_step": 50}
  )
  best = best_checkpoint.read_best(str(tmp_path))
  assert best["step"] == 50 and best["metric"] == "dev/m"
  # The best's weights are the step-50 weights (the run's ckpt-50), alone in
  # best/, without the optimizer's slots.
  np.testing.assert_array_equal(
      _kernel(best["prefix"]), _kernel(str(tmp_path / "ckpt-50"))
  )
  assert not np.array_equal(
      _kernel(best["prefix"]), _kernel(str(tmp_path / "ckpt-60"))
  )
  names = [n for n, _ in tf.train.list_variables(best["prefix"])]
  assert not [n for n in names if n.startswith("optimizer")]
  assert sorted(os.listdir(tmp_path / "best"))[:1] == ["best.json"]
  assert {f.split(".")[0] for f in os.listdir(tmp_path / "best")} == {
      "best",
      "checkpoint",
      "ckpt-50",
  }
  assert best_checkpoint.resolve(str(tmp_path)) == best["prefix"]
  assert tf.train.latest_checkpoint(str(tmp_path / "best")) == best["prefix"]
  assert best_checkpoint.resolve(str(tmp_path), "latest").endswith("ckpt-60")
  # Every evaluation is a TensorBoard point of MODEL_DIR/eval.
  points = {}
  for path in tf.io.gfile.glob(str(tmp_path / "eval" / "events.*")):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        if value.tag == "dev/m":
          points[event.step] = float(tf.make_ndarray(value.tensor))
  assert points == pytest.approx(SCRIPT)


def test_a_tie_keeps_the_earlier_checkpoint(tmp_path):
  _trainer(tmp_path, steps=40).train()
  assert best_checkpoint.read_best(str(tmp_path))["step"] == 20


def test_a_kill_during_an_evaluation_resumes_to_the_same_record(tmp_path):
  whole = tmp_path / "whole"
  expected = _trainer(whole).train()
  killed = tmp_path / "killed"
  with pytest.raises(Killed):
    _trainer(killed, kill_at=40).train()
  # ckpt-40 was saved, its evaluation never recorded.
  assert _steps(killed) == [10, 20, 30]
  assert best_checkpoint.read_best(str(killed))["step"] == 20
  # Resume is bit-exact: the same evaluations, the same best.
  assert _trainer(killed).train() == expected
  assert best_checkpoint.read_history(
      str(killed)
  ) == best_checkpoint.read_history(str(whole))
  np.testing.assert_array_equal(
      _kernel(best_checkpoint.resolve(str(killed))),
      _kernel(best_checkpoint.resolve(str(whole))),
  )


def test_resuming_before_a_recorded_evaluation_drops_it_and_redoes_it(
    tmp_path,
):
  expected = _trainer(tmp_path / "whole").train()
  model_dir = tmp_path / "run"
  _trainer(model_dir, steps=50).train()
  assert best_checkpoint.read_best(str(model_dir))["step"] == 50
  # The newest checkpoints are lost (a damaged disk): the run resumes from
  # ckpt-30, past which two evaluations and the best were recorded.
  for step in (40, 50):
    for path in tf.io.gfile.glob(str(model_dir / f"ckpt-{step}.*")):
      os.remove(path)
  with open(model_dir / "checkpoint", "w") as f:
    f.write('model_checkpoint_path: "ckpt-30"\n')
  assert _trainer(model_dir).train() == expected
  assert best_checkpoint.read_history(
      str(model_dir)
  ) == best_checkpoint.read_history(str(tmp_path / "whole"))


def test_early_stopping_after_patience_evaluations_without_improvement(
    tmp_path,
):
  trainer = _trainer(tmp_path, patience=2)
  results = trainer.train()
  # 30 (a tie) and 40 do not improve on 20: training ends at step 40.
  assert trainer.global_step == 40
  assert _steps(tmp_path) == [10, 20, 30, 40]
  assert results["best_checkpoint_step"] == 20
  assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-40")
  # A rerun with the same patience trains and evaluates nothing more.
  again = _trainer(tmp_path, patience=2)
  assert again.train() == pytest.approx(results)
  assert again.global_step == 40 and _steps(tmp_path) == [10, 20, 30, 40]
  # More patience: training goes on to the improvement at step 50.
  more = _trainer(tmp_path, patience=3)
  assert more.train()["best_checkpoint_step"] == 50
  assert more.global_step == 60 and _steps(tmp_path) == [
      10,
      20,
      30,
      40,
      50,
      60,
  ]


def test_selection_errors_are_one_line(tmp_path):
  with pytest.raises(ValueError, match="'dev/x' is not among") as e:
    trainer = _trainer(tmp_path / "a")
    trainer.best.metric = "dev/x"
    trainer.train()
  assert "\n" not in str(e.value)
  with pytest.raises(ValueError, match="has no best checkpoint.*latest"):
    best_checkpoint.resolve(str(tmp_path / "a"), "best")
  _trainer(tmp_path / "b", steps=10).train()
  with open(tmp_path / "b" / "best" / "best.json") as f:
    assert json.load(f)["metric"] == "dev/m"
  other = _trainer(tmp_path / "b", steps=20)
  other.best.metric = "dev/w"
  with pytest.raises(ValueError, match="keeps its best checkpoint by dev/m"):
    other.train()
  with pytest.raises(ValueError, match="early_stopping_patience=-1"):
    BestCheckpoint("x", evaluate_fn=dict, metric="m", patience=-1)


def test_a_worker_other_than_the_chief_writes_only_to_its_scratch(tmp_path):
  from tests.official.test_trainer import LinearModel

  model = LinearModel()
  model({"x": tf.zeros([1, 3])})
  scratch = tmp_path / "model" / ".scratch-worker-1"
  worker = BestCheckpoint(
      str(tmp_path / "model"),
      evaluate_fn=lambda m: {"dev/m": 0.5},
      metric="dev/m",
      write=False,
      write_dir=str(scratch),
  )
  worker.resume(0)
  assert worker.evaluate(model, 10) == {"dev/m": 0.5}
  # It takes the same decisions (its best is step 10) ...
  assert worker.best["step"] == 10 and worker.evaluated(10)
  # ... and writes its weights (a collective write) where nobody reads them.
  assert sorted(os.listdir(tmp_path / "model")) == [".scratch-worker-1"]
  assert {f.split(".")[0] for f in os.listdir(scratch / "best")} == {"ckpt-10"}
