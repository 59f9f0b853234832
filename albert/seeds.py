"""Fine-tuning once per seed (`--seeds=1,2,3`), keeping the dev-best run.

Small GLUE sets (RTE, MRPC, CoLA) vary by several points between seeds;
the papers report the best of several runs. `run_seeds` trains each seed
into MODEL_DIR/seed_N with `finetuning.run`, on one strategy for the whole
process, and names the best in MODEL_DIR/seeds.json, which eval, predict
and export then follow (`finetuning.best_seed_dir`).
"""

import json
import os
from typing import Dict, Sequence

from absl import logging

from albert.finetuning import training as finetuning
from albert.finetuning import task_state
from official.core import best_checkpoint
from official.distribute import strategy as strategy_lib
from official.io import atomic_write
from official.io import files


def run_seeds(
    seeds: Sequence[int],
    *,
    mode: str,
    model_dir: str,
    gin_file: Sequence[str] = (),
    gin_param: Sequence[str] = (),
    keep_all_seeds: bool = False,
    **kwargs,
) -> Dict[str, float]:
  """Fine-tunes once per seed, each in MODEL_DIR/seed_N, and keeps the best.

  The seed sets the head's initialisation, dropout (`TrainerConfig.seed`)
  and the order of the training examples (the task's `seed`). Every run is
  evaluated on dev; the best by the task's main metric is reported and named
  in MODEL_DIR/seeds.json with every seed's results, and (unless
  `keep_all_seeds`) the other runs' checkpoints are deleted. eval, predict
  and export with `--model_dir=MODEL_DIR` then use the best run. A rerun
  skips the seeds already evaluated and resumes the one interrupted.

  Returns:
    The best run's metrics, `best_seed`, and `seed_N/<main metric>` of each.
  """
  if mode != "train_and_eval":
    raise ValueError(
        f"--seeds needs --mode=train_and_eval (not {mode}): the dev metrics "
        "pick the best seed"
    )
  seeds = [int(s) for s in seeds]
  if not seeds or len(set(seeds)) != len(seeds):
    raise ValueError(f"--seeds={seeds} must list distinct integers")
  task = finetuning.build_task(gin_file=gin_file, gin_param=gin_param)
  key = task.selection_key
  # One strategy for the process, reused by every seed: a multi-worker
  # strategy can be made only once, and new mirrored ones would collide on
  # their collective keys.
  name, tpu = kwargs.pop("strategy", "default"), kwargs.pop("tpu", None)
  finetuning.check_task_setup(task, model_dir, name, tpu)
  distribution = strategy_lib.make_strategy(name, tpu=tpu)
  results = {}
  for number, seed in enumerate(seeds, 1):
    directory = finetuning.seed_dir(model_dir, seed)
    done = task_state.read_eval_results(directory)
    if done is not None:
      results[seed] = done
      logging.info("Seed %d: already evaluated (%s)", seed, directory)
      continue
    logging.info(
        "Seed %d (%d of %d) into %s", seed, number, len(seeds), directory
    )
    results[seed] = finetuning.run(
        mode=mode,
        model_dir=directory,
        gin_file=gin_file,
        gin_param=[*gin_param, f"TrainerConfig.seed = {seed}"],
        seed=seed,
        strategy=distribution,
        **kwargs,
    )
    logging.info("Seed %d: %s %.4f", seed, key, results[seed][key])
  best = max(seeds, key=lambda s: results[s][key])  # the first on ties
  summary = {
      "metric": key,
      "best_seed": best,
      "best_model_dir": os.path.basename(finetuning.seed_dir(model_dir, best)),
      "seeds": {str(s): results[s] for s in seeds},
  }
  atomic_write.write_atomic(
      os.path.join(model_dir, finetuning.SEEDS_FILE),
      json.dumps(summary, indent=2, sort_keys=True),
  )
  if not keep_all_seeds:
    for seed in seeds:
      if seed != best:
        _remove_checkpoints(finetuning.seed_dir(model_dir, seed))
  logging.info(
      "Best of %d seeds by %s: seed %d (%s)",
      len(seeds),
      key,
      best,
      ", ".join(f"seed {s}: {results[s][key]:.4f}" for s in seeds),
  )
  return {
      **results[best],
      "best_seed": float(best),
      **{f"seed_{s}/{key}": results[s][key] for s in seeds},
  }


def _remove_checkpoints(directory: str) -> None:
  """Deletes a run's checkpoints (and their state file); metrics stay."""
  files.rmtree(os.path.join(directory, best_checkpoint.BEST_DIR))
  for name in files.listdir(directory):
    if name == "checkpoint" or name.startswith("ckpt-"):
      files.remove(os.path.join(directory, name))
