"""`BestCheckpoint`: evaluate during training, keep the best, stop when stale.

The dev protocol of the original ALBERT fine-tuning scripts (run_classifier.py,
run_race.py, run_squad_v1.py: every saved checkpoint is evaluated on dev and
the best by one metric is kept as `model.ckpt-best` and reported), done inside
the training run instead of by a second process:

  MODEL_DIR/eval_history.jsonl  one JSON line per evaluation: `step` and
                                every metric, in step order
  MODEL_DIR/best/ckpt-S         the model's weights (no optimizer state) at
                                the best evaluation so far, step S
  MODEL_DIR/best/best.json      {"step", "metric", "value", "results"}: what
                                names the best; written after its weights
  MODEL_DIR/best/checkpoint     the state file, so TensorFlow tools find it

The best is replaced only by a strictly better value (the original's `>`),
so a tie keeps the earlier checkpoint. Every file is written atomically and
in an order that a kill at any point leaves consistent: the weights first,
then `best.json` (which names them), then the history line. After a kill,
`resume(step)` drops the history lines past the checkpoint the run resumes
from (the steps it trains again) and keeps the best: its weights are whole
and a deterministic rerun evaluates those steps to the same figures.
"""

import json
import math
import os
from typing import Any, Callable, Dict, List, Optional

from absl import logging
import tensorflow as tf

from official.core import checkpoints
from official.io import atomic_write
from official.io import files

HISTORY_FILE = "eval_history.jsonl"
BEST_DIR = "best"
BEST_FILE = "best.json"
STEP_KEY = "best_checkpoint_step"


def read_best(model_dir: str) -> Optional[Dict[str, Any]]:
  """MODEL_DIR/best/best.json with `prefix` (the weights' checkpoint) added;
  None when the run kept no best."""
  path = os.path.join(model_dir, BEST_DIR, BEST_FILE)
  if not files.exists(path):
    return None
  best = json.loads(files.read_text(path))
  best["prefix"] = _prefix(model_dir, best["step"])
  return best


def resolve(model_dir: str, checkpoint: Optional[str] = None) -> str:
  """The checkpoint prefix that `--checkpoint` names in a model directory:
  None, the best if the run kept one, else the latest; `best`; `latest`; or
  a prefix / directory (`checkpoints.resolve`).

  Raises:
    ValueError: `best` of a run that kept none; no checkpoint at all.
  """
  if checkpoint in (None, "best"):
    best = read_best(model_dir)
    if best is not None:
      return best["prefix"]
    if checkpoint == "best":
      raise ValueError(
          f"{model_dir} has no best checkpoint ({BEST_DIR}/{BEST_FILE}: it is "
          "kept by --mode=train_and_eval): use --checkpoint=latest"
      )
  if checkpoint in (None, "latest"):
    return checkpoints.resolve(model_dir)
  return checkpoints.resolve(checkpoint)


def read_history(model_dir: str) -> List[Dict[str, float]]:
  """The evaluations of MODEL_DIR/eval_history.jsonl, in order; a last line
  cut short by a kill is ignored."""
  path = os.path.join(model_dir, HISTORY_FILE)
  if not files.exists(path):
    return []
  entries = []
  for line in files.read_text(path).splitlines(keepends=True):
    try:
      entries.append(json.loads(line))
    except json.JSONDecodeError:
      logging.warning("%s: ignoring an incomplete line", path)
  return entries


class BestCheckpoint:
  """Evaluates a model during training and keeps its best weights.

  Args:
    model_dir: the run's model directory.
    evaluate_fn: model -> metrics (name -> float), e.g. every dev split's.
    metric: the key of `evaluate_fn`'s results that selects the best.
    higher_is_better: False for a loss-like metric.
    patience: `should_stop` once this many evaluations in a row did not
      improve on the best (0: never).
    write: False on the workers other than the chief (they evaluate, to
      take the same stop decisions, and write their weights to `write_dir`,
      a scratch directory, and nothing else).
    write_dir: where this worker writes the best weights (default
      `model_dir`).
  """

  def __init__(
      self,
      model_dir: str,
      *,
      evaluate_fn: Callable[[Any], Dict[str, float]],
      metric: str,
      higher_is_better: bool = True,
      patience: int = 0,
      write: bool = True,
      write_dir: Optional[str] = None,
  ):
    if patience < 0:
      raise ValueError(f"early_stopping_patience={patience} must be >= 0")
    self.model_dir = model_dir
    self.evaluate_fn = evaluate_fn
    self.metric = metric
    self.higher_is_better = higher_is_better
    self.patience = patience
    self.write = write
    self.write_dir = write_dir
    self.best: Optional[Dict[str, Any]] = None
    self.history: List[Dict[str, float]] = []

  # --- State ----------------------------------------------------------------

  def resume(self, step: int) -> None:
    """Reads back what a run up to `step` (the checkpoint it resumes from)
    left: the best so far and the history, less its lines past `step`."""
    self.best = read_best(self.model_dir)
    if self.best is not None and self.best["metric"] != self.metric:
      raise ValueError(
          f"{self.model_dir} keeps its best checkpoint by "
          f"{self.best['metric']}, this run selects by {self.metric}: use a "
          "new --model_dir, or the same selection metric"
      )
    history = read_history(self.model_dir)
    self.history = [e for e in history if e["step"] <= step]
    if self.write and len(self.history) != len(history):
      logging.info(
          "Resuming at step %d: dropping %d later evaluations from %s",
          step,
          len(history) - len(self.history),
          HISTORY_FILE,
      )
      atomic_write.write_atomic(
          os.path.join(self.model_dir, HISTORY_FILE),
          "".join(_line(e) for e in self.history),
      )

  def evaluated(self, step: int) -> bool:
    return any(e["step"] == step for e in self.history)

  @property
  def stale_evaluations(self) -> int:
    """Evaluations since the best one (all of them when there is none)."""
    best_step = self.best["step"] if self.best else -1
    return sum(1 for e in self.history if e["step"] > best_step)

  @property
  def should_stop(self) -> bool:
    return bool(self.patience) and self.stale_evaluations >= self.patience

  def results(self) -> Dict[str, float]:
    """The best evaluation's metrics with `best_checkpoint_step`; {} before
    the first evaluation."""
    if self.best is None:
      return {}
    return {**self.best["results"], STEP_KEY: float(self.best["step"])}

  # --- Evaluating -------------------------------------------------------------

  def evaluate(self, model, step: int) -> Dict[str, float]:
    """Evaluates `model` (trained to `step`), keeps it if it is the best,
    records the evaluation; returns its metrics."""
    results = {k: float(v) for k, v in self.evaluate_fn(model).items()}
    if self.metric not in results:
      raise ValueError(
          f"the selection metric {self.metric!r} is not among the evaluation's "
          f"metrics ({', '.join(sorted(results))}): choose one of them"
      )
    value = results[self.metric]
    if self._improves(value) and not (self.best and self.best["step"] == step):
      previous = self.best["value"] if self.best else None
      self._keep(model, step, value, results)
      logging.info(
          "step %d: new best %s %.4f (was %s); weights in %s",
          step,
          self.metric,
          value,
          "none" if previous is None else f"{previous:.4f}",
          self.best["prefix"],
      )
    entry = {"step": step, **results}
    self.history.append(entry)
    if self.write:
      # Rewritten whole, atomically: object stores cannot append.
      atomic_write.write_atomic(
          os.path.join(self.model_dir, HISTORY_FILE),
          "".join(_line(e) for e in self.history),
      )
    logging.info(
        "step %d: %s %.4f; best %.4f at step %d%s",
        step,
        self.metric,
        value,
        self.best["value"] if self.best else math.nan,
        self.best["step"] if self.best else -1,
        f"; {self.stale_evaluations} of {self.patience} evaluations without "
        "improvement"
        if self.patience
        else "",
    )
    if self.should_stop:
      logging.info(
          "Early stopping at step %d: %d evaluations without improving %s",
          step,
          self.stale_evaluations,
          self.metric,
      )
    return results

  def _improves(self, value: float) -> bool:
    if math.isnan(value):
      return False
    if self.best is None:
      return True
    best = self.best["value"]
    return value > best if self.higher_is_better else value < best

  def _keep(self, model, step: int, value: float, results) -> None:
    best = {
        "step": step,
        "metric": self.metric,
        "value": value,
        "results": results,
    }
    self.best = {
        **best,
        "prefix": _prefix(self.model_dir, step),
    }
    # Every worker writes the weights (a write may be collective); only the
    # chief's copy is where readers look, the others go to `write_dir`, a
    # scratch directory (as the trainer's checkpoints do).
    directory = os.path.join(self.write_dir or self.model_dir, BEST_DIR)
    files.makedirs(directory)
    # Weights only: eval, predict and export need nothing else, and they are
    # a third of a checkpoint with AdamW's two slots.
    tf.train.Checkpoint(model=model).write(
        _prefix(self.write_dir or self.model_dir, step)
    )
    if self.write:
      atomic_write.write_atomic(
          os.path.join(directory, BEST_FILE),
          json.dumps(best, indent=2, sort_keys=True),
      )
      atomic_write.write_atomic(
          os.path.join(directory, checkpoints.STATE_FILE),
          f'model_checkpoint_path: "ckpt-{step}"\n'
          f'all_model_checkpoint_paths: "ckpt-{step}"\n',
      )
    for path in files.glob(os.path.join(files.escape(directory), "ckpt-*")):
      if not os.path.basename(path).startswith(f"ckpt-{step}."):
        files.remove(path)


def _prefix(model_dir: str, step: int) -> str:
  """MODEL_DIR/best/ckpt-STEP: the best weights' checkpoint prefix."""
  return os.path.join(model_dir, BEST_DIR, f"ckpt-{step}")


def _line(entry: Dict[str, float]) -> str:
  return json.dumps(entry, sort_keys=True) + "\n"
