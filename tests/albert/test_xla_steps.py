"""What a TPU needs, checked without one: every task's replica train step
and eval step compile with XLA (`TrainerConfig.jit_compile`, one replica),
in float32 and mixed_bfloat16, with gradient accumulation 1 and 2, and give
the loss (and eval outputs) of the float32 step without XLA; every input is
fully static and int32 / float32 (a TPU has no other input types, and
compiles one program per shape).

Pretraining reads examples (the documents reader gives the same step the
same input signature); fine-tuning covers every task
family: classification, regression, multi-label, token classification,
SQuAD v1.1 and v2.0, RACE, sentence embeddings.
"""

import json
import random

import gin
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from albert.experiments import synthetic_squad
from albert.finetuning import training as finetuning
from albert.pretraining.task import PretrainTask
from official.core.trainer import Trainer
from official.core.trainer_config import TrainerConfig
from official.distribute.replicated import Replicated
from official.distribute.strategy import make_strategy
from official.optimization.optimizer_config import OptimizerConfig
from tests.albert.synthetic_records import write_records
from tests.albert.finetuning.finetune_helpers import TINY_GIN
from tests.albert.finetuning.glue.test_task import write_sst2
from tests.albert.finetuning.race.test_task import write_race
from tests.albert.finetuning.own_data import test_text_multilabel
from tests.albert.finetuning.own_data import test_token_classification
from tests.conftest import VOCAB_SIZE
from tests import helpers

pytestmark = pytest.mark.slow

_STATIC_DTYPES = (tf.int32, tf.float32)
_NO_DROPOUT = [
    "AlbertConfig.num_layers = 1",
    "AlbertConfig.dropout_rate = 0.0",
    "AlbertConfig.attention_dropout_rate = 0.0",
]
# Fine-tuning: (gin recipe, data directory fixture name, task bindings).
_FINETUNING = {
    "classification": ("sst2.gin", "sst2", ["GlueTask.seq_length = 24"]),
    "regression": ("text_regression.gin", "scores", []),
    "multilabel": ("text_multilabel.gin", "multilabel", []),
    "token_classification": ("token_classification.gin", "conll", []),
    "squad_v1": ("squad_v1.gin", "squad_v1", []),
    "squad_v2": ("squad_v2.gin", "squad_v2", []),
    "race": (
        "race.gin",
        "race",
        ["RaceTask.seq_length = 48", "RaceTask.max_qa_length = 16"],
    ),
    # Scored pairs: the cosine loss is a sum over rows, so micro-batches
    # add up to the global batch's loss (in-batch negatives would not).
    "sentence_embedding": (
        "sentence_embedding.gin",
        "pairs",
        ["SentenceEmbeddingTask.seq_length = 24"],
    ),
}
_SEQ = {
    "TextRegressionTask": 24,
    "TextMultiLabelTask": 24,
    "TokenClassificationTask": 24,
    "SquadTask": 32,
}


def _write_scores(folder, label="label", scale=5.0):
  rng = random.Random(1)
  folder.mkdir()
  for split, n in (("train", 16), ("dev", 5), ("test", 2)):
    with open(folder / f"{split}.jsonl", "w") as f:
      for _ in range(n):
        row = {"text": "the value of a string", "text_pair": "a list"}
        f.write(json.dumps({**row, label: rng.random() * scale}) + "\n")


@pytest.fixture(scope="module")
def data(tmp_path_factory, tokenizer, corpus_path, spm_model):
  """Tiny data of every task, made once."""
  from albert.pretraining_data.data_config import PretrainingDataConfig
  from albert.pretraining_data.pipeline import create_pretraining_data

  root = tmp_path_factory.mktemp("xla_steps")
  write_records(root / "train.tfrecord", 16, seed=0, vocab_size=VOCAB_SIZE)
  write_records(root / "eval.tfrecord", 11, seed=1, vocab_size=VOCAB_SIZE)
  create_pretraining_data(
      input_file=corpus_path,
      output_file=str(root / "documents" / "train.tfrecord"),
      spm_model_file=spm_model,
      config=PretrainingDataConfig(output_format="documents", dupe_factor=1),
      num_output_shards=1,
  )
  write_sst2(str(root / "glue"), n_train=16, n_dev=5, n_test=2)
  _write_scores(root / "scores")
  _write_scores(root / "pairs", label="score", scale=1.0)
  test_text_multilabel.write_multilabel_csv(
      str(root / "multilabel"), n_train=16, n_dev=5
  )
  test_token_classification.write_conll(
      str(root / "conll"), n_train=16, n_dev=5
  )
  write_race(str(root / "race"), sizes=(("train", 8), ("dev", 4)))
  rng = random.Random(7)
  markers, words = synthetic_squad.markers_and_words(tokenizer, 20)
  for version in ("1.1", "2.0"):
    folder = root / f"squad_v{version[0]}"
    folder.mkdir()
    for split, n in (("train", 12), ("dev", 5)):
      synthetic_squad.write_squad(
          folder / f"{split}-v{version}.json", rng, words, markers, n, version
      )
  return {
      "root": root,
      "sst2": root / "glue",
      "scores": root / "scores",
      "pairs": root / "pairs",
      "multilabel": root / "multilabel",
      "conll": root / "conll",
      "race": root / "race",
      "squad_v1": root / "squad_v1",
      "squad_v2": root / "squad_v2",
  }


def _pretrain_task(data, input_format):
  train = (
      data["root"] / "documents" / "train*.tfrecord"
      if input_format == "documents"
      else data["root"] / "train.tfrecord"
  )
  gin.clear_config()
  gin.parse_config(TINY_GIN + _NO_DROPOUT)
  return PretrainTask(
      train_file_pattern=str(train),
      eval_file_pattern=str(data["root"] / "eval.tfrecord"),
      input_format=input_format,
      eval_input_format="examples",
      global_batch_size=4,
      seq_length=32,
      max_predictions_per_seq=5,
      shuffle_buffer_size=4,
  )


def _trainer(task, tmp_path, *, jit, policy, accumulation):
  return Trainer(
      task=task,
      strategy=make_strategy("default"),
      optimizer_config=OptimizerConfig(
          name="adamw", learning_rate=1e-3, warmup_steps=0, decay_steps=10
      ),
      config=TrainerConfig(
          train_steps=1,
          steps_per_loop=1,
          checkpoint_interval=1,
          eval_steps=10,
          gradient_accumulation_steps=accumulation,
          mixed_precision_policy=policy,
          jit_compile=jit,
          seed=3,
      ),
      model_dir=str(tmp_path / ("xla" if jit else "plain")),
  )


def _assert_static(element_spec, what):
  for name, spec in element_spec.items():
    assert spec.shape.is_fully_defined(), (what, name, spec)
    assert spec.dtype in _STATIC_DTYPES, (what, name, spec)


def _tolerance(policy):
  return 1e-4 if policy == "float32" else 3e-2


@pytest.fixture
def _float32_after():
  yield
  tf_keras.mixed_precision.set_global_policy("float32")
  gin.clear_config()


# The XLA steps of each case, at accumulation 1 and 2, are held to the
# float32 step without XLA (`_plain_float32`): the global batch and so the
# first step's loss are the same for all.
@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_pretraining_steps_compile(
    data, tmp_path, policy, _plain_float32, _float32_after
):
  if "pretraining" not in _plain_float32:
    with helpers.eagerly():
      _plain_float32["pretraining"] = _pretraining_step(
          data, tmp_path, "float32", jit=False, accumulation=1
      )
  plain_loss, plain_eval = _plain_float32["pretraining"]
  tolerance = _tolerance(policy)
  for accumulation in (1, 2):
    loss, evaluation = _pretraining_step(
        data, tmp_path, policy, jit=True, accumulation=accumulation
    )
    assert loss == pytest.approx(plain_loss, rel=tolerance), accumulation
    for name, value in (plain_eval or {}).items():
      if accumulation == 1:
        assert evaluation[name] == pytest.approx(
            value, rel=tolerance, abs=1e-3
        ), name


def _pretraining_step(data, tmp_path, policy, *, jit, accumulation):
  """(loss, eval results or None) of one pretraining step; the eval (at
  accumulation 1) on the weights it leaves."""
  task = _pretrain_task(data, "examples")
  trainer = _trainer(
      task, tmp_path, jit=jit, policy=policy, accumulation=accumulation
  )
  assert trainer.whole_step_xla == jit
  _assert_static(trainer._dataset(training=True).element_spec, "train")
  loss, finite = trainer.run_steps(trainer.train_iterator(), 1)
  assert finite
  if accumulation != 1:
    return loss, None
  _assert_static(trainer._dataset(training=False).element_spec, "eval")
  return loss, trainer.evaluate(step=1)


def test_documents_reader_feeds_the_compiled_examples_step(
    data, tmp_path, _float32_after
):
  # A jit-compiled step is one program per input signature: the documents
  # reader gives the step of test_pretraining_steps_compile the batch of
  # the examples reader (keys, static shapes, dtypes), so it compiles the
  # same program.
  specs = {}
  for input_format in ("examples", "documents"):
    trainer = _trainer(
        _pretrain_task(data, input_format),
        tmp_path / input_format,
        jit=True,
        policy="float32",
        accumulation=1,
    )
    assert trainer.whole_step_xla
    specs[input_format] = trainer._dataset(training=True).element_spec
    _assert_static(specs[input_format], input_format)
  assert specs["documents"] == specs["examples"]


@pytest.fixture(scope="module")
def _plain_float32():
  """{case: (loss, eval outputs)} of the float32 steps without XLA, run
  eagerly (`helpers.eagerly`: the same code untraced)."""
  return {}


# The trainer's accumulation is the same code for every task (pretraining
# covers every combination); what a task adds is its batch layout, split
# into micro-batches, and its heads in each precision. Both precisions'
# XLA steps are held to one float32 step without XLA, run once per task:
# the variables are float32 under either policy, so they start equal.
@pytest.mark.parametrize(
    "policy,xla_accumulation", [("float32", 2), ("mixed_bfloat16", 1)]
)
@pytest.mark.parametrize("name", sorted(_FINETUNING))
def test_fine_tuning_steps_compile(
    data,
    spm_model,
    tmp_path,
    name,
    policy,
    xla_accumulation,
    _plain_float32,
    _float32_after,
):
  if name not in _plain_float32:
    with helpers.eagerly():
      _plain_float32[name] = _fine_tuning_step(
          data, spm_model, tmp_path, name, "float32", jit=False, accumulation=1
      )
  plain_loss, plain_outputs = _plain_float32[name]
  loss, outputs = _fine_tuning_step(
      data,
      spm_model,
      tmp_path,
      name,
      policy,
      jit=True,
      accumulation=xla_accumulation,
  )
  tolerance = _tolerance(policy)
  assert loss == pytest.approx(plain_loss, rel=tolerance)
  for key, value in plain_outputs.items():
    if value.dtype.kind == "f":
      np.testing.assert_allclose(
          outputs[key], value, rtol=tolerance, atol=tolerance, err_msg=key
      )


def _fine_tuning_step(
    data, spm_model, tmp_path, name, policy, *, jit, accumulation
):
  """(loss, eval outputs) of one training step of task `name` and its eval
  step on the weights that step leaves."""
  recipe, data_name, bindings = _FINETUNING[name]
  gin.clear_config()
  task = finetuning.build_task(
      gin_file=[f"gin/finetune/{recipe}"],
      gin_param=TINY_GIN + _NO_DROPOUT + bindings + _sequence_bindings(recipe),
      data_dir=str(data[data_name]),
      spm_model_file=spm_model,
  )
  task.global_batch_size = task.eval_batch_size = 4
  task.dropout_rate = 0.0
  task.prepare_training_data()
  for spec in task.feature_spec().values():
    assert spec.shape.is_fully_defined() and spec.dtype in _STATIC_DTYPES
  trainer = _trainer(
      task, tmp_path, jit=jit, policy=policy, accumulation=accumulation
  )
  _assert_static(trainer._dataset(training=True).element_spec, "train")
  loss, finite = trainer.run_steps(trainer.train_iterator(), 1)
  assert finite
  split = task.eval_splits[0]
  _, _, outputs = task.predict(trainer.model, split, Replicated(None, jit))
  return loss, outputs


def _sequence_bindings(recipe):
  """Short sequences for the tiny models (32 positions)."""
  task = {
      "text_regression.gin": "TextRegressionTask",
      "text_multilabel.gin": "TextMultiLabelTask",
      "token_classification.gin": "TokenClassificationTask",
      "squad_v1.gin": "SquadTask",
      "squad_v2.gin": "SquadTask",
  }.get(recipe)
  if task is None:
    return []
  bindings = [f"{task}.seq_length = {_SEQ[task]}"]
  if task == "SquadTask":
    bindings += ["SquadTask.max_query_length = 8", "SquadTask.doc_stride = 8"]
  return bindings
