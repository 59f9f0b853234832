"""The whole workflow with every path on an object store: TensorFlow's
`ram://` file system, the stand-in for `gs://` (the same `tf.io.gfile`
calls). Pretraining, a resumed run, continued pretraining, fine-tuning
(train_and_eval, predict, export) from it and the SavedModel export, in one
process, write the same files there as on a local disk, and nothing
locally."""

import os
import re
import uuid

import pytest
import tensorflow as tf

from albert import model_dir as model_dir_lib
from albert.pretraining.training import pretrain
from albert.serving import exporter
from official.io import files
from tests import helpers
from tests.albert.synthetic_records import write_records
from tests.albert.finetuning import finetune_helpers
from tests.albert.finetuning.own_data import test_text_classification

pytestmark = pytest.mark.slow

_PRETRAIN = [
    *finetune_helpers.TINY_GIN,
    "PretrainTask.seq_length=32",
    "PretrainTask.max_predictions_per_seq=5",
    "PretrainTask.global_batch_size=8",
    "OptimizerConfig.warmup_steps=1",
    "TrainerConfig.steps_per_loop=2",
    "TrainerConfig.checkpoint_interval=2",
    "TrainerConfig.eval_interval=2",
    "TrainerConfig.eval_steps=2",
    "TrainerConfig.deterministic=True",
]
_FINETUNE = [
    "TextClassificationTask.seq_length = 32",
    "TextClassificationTask.global_batch_size = 8",
    "TextClassificationTask.eval_batch_size = 8",
    "EpochSchedule.train_epochs = 1.0",
    "TrainerConfig.eval_interval = 2",
]


def _copy_tree(local: str, remote: str) -> None:
  for name in sorted(os.listdir(local)):
    tf.io.gfile.makedirs(remote)
    tf.io.gfile.copy(os.path.join(local, name), f"{remote}/{name}")


def _workflow(root: str, inputs: str, reference: bool = False) -> None:
  """Every writing step of the package, into `root`, reading `inputs`. The
  local run, the `reference`, pretrains untraced (`helpers.eagerly`: the
  same files in less time); fine-tuning, whose dev scores pick the best
  checkpoint, and the exports are traced in both runs."""

  def pretraining(model_dir, steps, *extra):
    with helpers.eagerly(reference):
      pretrain(
          model_dir=model_dir,
          gin_file=["gin/tiny.gin"],
          gin_param=[
              *_PRETRAIN,
              f"PretrainTask.train_file_pattern='{inputs}/train-*.tfrecord'",
              f"PretrainTask.eval_file_pattern='{inputs}/eval.tfrecord'",
              f"TRAIN_STEPS={steps}",
              *extra,
          ],
      )

  pretrained = f"{root}/pretrained"
  pretraining(pretrained, 2)
  pretraining(pretrained, 4)  # resumes from ckpt-2
  pretraining(
      f"{root}/continued", 2, f"PretrainTask.init_checkpoint='{pretrained}'"
  )
  common = dict(
      model_dir=f"{root}/finetuned",
      data_dir=f"{root}/mydata",
      spm_model_file=f"{inputs}/spm.model",
  )
  gin_file = "gin/finetune/text_classification.gin"
  finetune_helpers.finetune(
      "train_and_eval",
      gin_file,
      _FINETUNE,
      init_checkpoint=pretrained,
      **common,
  )
  finetune_helpers.finetune("predict", gin_file, _FINETUNE, **common)
  finetune_helpers.finetune(
      "export", gin_file, _FINETUNE, export_dir=f"{root}/classifier", **common
  )
  model, _ = model_dir_lib.load_pretrainer(pretrained)
  exporter.export(
      model,
      spm_model_file=f"{inputs}/spm.model",
      export_dir=f"{root}/exported",
      seq_length=32,
  )


def _listing(root: str):
  """Every file under `root` (through tf.io.gfile), event files by run."""
  return [
      re.sub(r"events\.out\.tfevents\..*", "events.out.tfevents", name)
      for name in files.walk_files(root)
  ]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, spm_model):
  local = tmp_path_factory.mktemp("object_store_inputs")
  for i in range(2):
    write_records(local / f"train-{i}.tfrecord", 32, seed=i)
  write_records(local / "eval.tfrecord", 16, seed=7)
  tf.io.gfile.copy(spm_model, str(local / "spm.model"))
  return local


def test_the_workflow_on_an_object_store_writes_what_a_local_one_does(
    inputs, tmp_path, monkeypatch
):
  own_data = str(tmp_path / "own_data")
  test_text_classification.write_own_csv(
      own_data, n_train=24, n_dev=16, n_test=4
  )
  local_root = str(tmp_path / "local")
  _copy_tree(own_data, f"{local_root}/mydata")
  _workflow(local_root, str(inputs), reference=True)

  remote_inputs = f"ram://inputs-{uuid.uuid4().hex[:8]}"
  remote_root = f"ram://runs-{uuid.uuid4().hex[:8]}"
  _copy_tree(str(inputs), remote_inputs)
  _copy_tree(own_data, f"{remote_root}/mydata")
  empty = tmp_path / "cwd"
  empty.mkdir()
  monkeypatch.chdir(empty)
  _workflow(remote_root, remote_inputs)

  assert os.listdir(empty) == []  # nothing written relative to the cwd
  assert not os.path.exists(os.path.join(helpers.REPO, "ram:"))
  local, remote = _listing(local_root), _listing(remote_root)
  assert remote == local, (set(local) - set(remote), set(remote) - set(local))
  # What each part wrote is there, whole.
  for name in (
      "pretrained/ckpt-4.index",
      "pretrained/model_config.json",
      "pretrained/operative_config.gin",
      "pretrained/eval/events.out.tfevents",
      "continued/ckpt-2.index",
      "finetuned/best/best.json",
      "finetuned/eval_history.jsonl",
      "finetuned/eval_results.json",
      "finetuned/labels.json",
      "finetuned/predictions/test_predictions.csv",
      "classifier/saved_model.pb",
      "exported/serving/saved_model.pb",
      "exported/encoder/variables/variables.index",
  ):
    assert name in remote, name
  assert not [n for n in remote if ".tmp-" in n or "/.lock" in n]
  served = tf.saved_model.load(f"{remote_root}/classifier")
  out = served.signatures["serving_default"](text=tf.constant(["a match"]))
  assert out["label"].shape == [1]
