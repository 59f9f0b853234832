"""The fine-tuning recipes hold the values docs/reference.md section 6 quotes
(the GLUE table, the dev protocol's intervals and selection keys)."""

import os
import re

import gin
import pytest

from albert import configs
from albert.finetuning import training as finetuning
from albert.finetuning.glue.task import GlueTask

REFERENCE = os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "docs", "reference.md"
)
RECIPES = {
    "MNLI": "mnli",
    "QNLI": "qnli",
    "QQP": "qqp",
    "RTE": "rte",
    "SST-2": "sst2",
    "MRPC": "mrpc",
    "CoLA": "cola",
    "STS-B": "stsb",
    "WNLI": "wnli",
}


def _glue_table():
  """task -> (lr, batch, steps, warmup) from the reference's GLUE table."""
  with open(REFERENCE, encoding="utf-8") as f:
    text = f.read()
  rows = re.findall(
      r"^\| ([A-Za-z0-9-]+) \| ([0-9e.-]+) \| (\d+) \| (\d+) \| (\d+) \|$",
      text,
      re.M,
  )
  return {
      name: (float(lr), int(batch), int(steps), int(warmup))
      for name, lr, batch, steps, warmup in rows
      if name in RECIPES
  }


def _bindings(recipe: str):
  gin.clear_config()
  configs.parse([finetuning.DEFAULT_GIN, recipe])
  values = {
      key: _value(gin.query_parameter(key))
      for key in (
          "OptimizerConfig.learning_rate",
          "GlueTask.global_batch_size",
          "TrainerConfig.train_steps",
          "OptimizerConfig.warmup_steps",
          "TrainerConfig.eval_interval",
          "TrainerConfig.early_stopping_patience",
      )
      if _bound(key)
  }
  gin.clear_config()
  return values


def _bound(key):
  try:
    gin.query_parameter(key)
  except ValueError:
    return False
  return True


def _value(binding):
  """A macro reference's value (`%TRAIN_STEPS`), else the value."""
  if isinstance(binding, gin.config.ConfigurableReference) or hasattr(
      binding, "scoped_configurable_fn"
  ):
    return binding.scoped_configurable_fn()
  return binding


def test_glue_recipes_match_the_reference_table():
  table = _glue_table()
  assert set(table) == set(RECIPES), "the reference lists every GLUE recipe"
  for name, (lr, batch, steps, warmup) in table.items():
    bound = _bindings(f"gin/finetune/{RECIPES[name]}.gin")
    assert bound["OptimizerConfig.learning_rate"] == pytest.approx(lr), name
    assert bound["GlueTask.global_batch_size"] == batch, name
    assert bound["TrainerConfig.train_steps"] == steps, name
    assert bound["OptimizerConfig.warmup_steps"] == warmup, name


@pytest.mark.parametrize(
    "recipe,interval",
    [
        ("gin/finetune/mnli.gin", 100),
        ("gin/finetune/qnli.gin", 200),  # run_glue.sh saves QNLI every 200
        ("gin/finetune/wnli.gin", 100),
        ("gin/finetune/race.gin", 100),  # run_race.py's default
        ("gin/finetune/squad_v1.gin", 1000),  # run_squad_v*.py's default
        ("gin/finetune/squad_v2.gin", 1000),
        ("gin/finetune/text_classification.gin", 100),
        ("gin/finetune/token_classification.gin", 100),
    ],
)
def test_every_recipe_evaluates_at_the_originals_checkpoint_interval(
    recipe, interval
):
  bound = _bindings(recipe)
  assert bound["TrainerConfig.eval_interval"] == interval
  assert bound["TrainerConfig.early_stopping_patience"] == 0


@pytest.mark.parametrize(
    "task,key",
    [
        ("cola", "mcc"),  # matthew_corr
        ("stsb", "pearson"),
        ("mrpc", "accuracy"),  # eval_accuracy, not GLUE's mean with F1
        ("qqp", "accuracy"),
        ("mnli", "accuracy"),
        ("rte", "accuracy"),
    ],
)
def test_glue_selects_by_the_originals_key_unless_told(task, key):
  assert GlueTask(task_name=task).main_metric == key


def test_glue_selection_metric_is_a_choice_among_the_tasks_metrics():
  assert GlueTask(
      task_name="mrpc", main_metric="accuracy_and_f1"
  ).selection_key == ("dev/accuracy_and_f1")
  assert GlueTask(task_name="stsb", main_metric="corr").main_metric == "corr"
  with pytest.raises(ValueError, match=r"main_metric='f1' is not one of sst2"):
    GlueTask(task_name="sst2", main_metric="f1")
