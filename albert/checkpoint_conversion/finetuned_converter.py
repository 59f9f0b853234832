"""Fine-tuned models across formats: the encoder's names and the head's
(`finetuned_names`), to and from original TF1 checkpoints and transformers
model directories of the head's class; and the fine-tuning model directory
of ours that a conversion in writes.
"""

import os
from typing import Dict, List, Optional, Tuple

from absl import logging
import tensorflow as tf

from albert.checkpoint_conversion import finetuned_names
from albert.checkpoint_conversion import huggingface_names
from albert.checkpoint_conversion import original_checkpoint
from albert.checkpoint_conversion import original_names
from albert.checkpoint_conversion import safetensors_io
from albert.checkpoint_conversion.converter import assign
from albert.checkpoint_conversion.converter import check_output_dir
from albert.checkpoint_conversion.converter import staged
from albert.checkpoint_conversion.converter import write_original
from albert.checkpoint_conversion.errors import ConversionError
from albert.checkpoint_conversion.name_table import NameTable
from albert.modeling.config import AlbertConfig
from official.core import model_config_file
from official.io import atomic_write


def _encoder_part(table, exclude: Tuple[str, ...]) -> list:
  """The entries of a pretrainer name table without the pretraining heads
  (and whatever else `exclude` names by external prefix)."""
  return [e for e in table.entries if not e.external.startswith(exclude)]


def _original_finetuned_table(config: AlbertConfig, kind: str):
  entries = _encoder_part(original_names.name_table(config), ("cls/",))
  return NameTable(
      entries + finetuned_names.original_head(kind),
      format_name=original_names.FORMAT_NAME,
  )


def _huggingface_finetuned_table(config: AlbertConfig, kind: str, what: str):
  head, head_entries = finetuned_names.huggingface_head(kind, what)
  exclude = ("predictions.", "sop_classifier.")
  if not head.pooler:
    exclude += ("albert.pooler.",)
  entries = _encoder_part(huggingface_names.name_table(config), exclude)
  return head, NameTable(
      entries + head_entries, format_name=huggingface_names.FORMAT_NAME
  )


def finetuned_to_original(
    model, config: AlbertConfig, *, source: str, output_dir: str, step: int
) -> str:
  """Writes a fine-tuned model (restored from `source`) as an original TF1
  checkpoint: the encoder's names and the head's (`finetuned_names`)."""
  check_output_dir(output_dir)
  original_names.check_config(config, source)
  kind = finetuned_names.head_kind(model)
  table = _original_finetuned_table(config, kind)
  weights = finetuned_names.finetuned_weights(model)
  tensors = table.to_external({n: v.numpy() for n, v in weights.items()})
  logging.info("%s head of %s", kind, source)
  return write_original(output_dir, config, tensors, step)


def finetuned_to_huggingface(
    model,
    config: AlbertConfig,
    *,
    source: str,
    output_dir: str,
    labels: Optional[List[str]] = None,
    problem_type: Optional[str] = None,
) -> str:
  """Writes a fine-tuned model as a transformers model directory of its
  class (`AlbertForSequenceClassification`, ...); `labels` name the classes
  in `config.json` (`id2label`), `problem_type` is its loss and output
  function (`multi_label_classification`: sigmoid per label;
  `regression`)."""
  check_output_dir(output_dir)
  kind = finetuned_names.head_kind(model)
  head, table = _huggingface_finetuned_table(config, kind, source)
  data = huggingface_names.config_to_huggingface(config, what=source)
  data["architectures"] = [head.architecture]
  if kind == "squad_v1":
    data["num_labels"] = 2
  elif kind != "multiple_choice":
    data["num_labels"] = int(model.num_classes)
    if labels:
      data["id2label"] = {str(i): label for i, label in enumerate(labels)}
      data["label2id"] = {label: i for i, label in enumerate(labels)}
  if problem_type:
    data["problem_type"] = problem_type
  if hasattr(model, "dropout_rate"):
    data["classifier_dropout_prob"] = float(model.dropout_rate)
  weights = finetuned_names.finetuned_weights(model)
  if not head.pooler:  # the class has none: ours is not written
    weights = {
        n: v for n, v in weights.items() if not n.startswith("encoder/pooler")
    }
  tensors = table.to_external({n: v.numpy() for n, v in weights.items()})
  tensors.update(huggingface_names.projection_identity(config))
  with staged(output_dir) as staging:
    safetensors_io.write_weights(staging, tensors)
    safetensors_io.write_config(staging, data)
  logging.info(
      "%s: %s, %d tensors written", output_dir, head.architecture, len(tensors)
  )
  return os.path.join(output_dir, safetensors_io.SAFETENSORS_FILE)


def finetuned_from_original(model, *, checkpoint: str, config: AlbertConfig):
  """Fills a built fine-tuned model from an original TF1 fine-tuned
  checkpoint (the encoder and the head of its kind); returns its step."""
  tensors, prefix = original_checkpoint.read_checkpoint(checkpoint)
  step = tensors.pop(original_names.GLOBAL_STEP, None)
  for name in [n for n in tensors if n.endswith(("adam_m", "adam_v"))]:
    del tensors[name]  # a fine-tuning run's optimizer state is not kept
  kind = finetuned_names.head_kind(model)
  table = _original_finetuned_table(config, kind)
  weights = finetuned_names.finetuned_weights(model)
  shapes = {n: tuple(v.shape) for n, v in weights.items()}
  assign(weights, table.to_ours(tensors, shapes, source=prefix))
  logging.info("%s: %s head, %d weights read", prefix, kind, len(table))
  return 0 if step is None else int(step)


def finetuned_from_huggingface(model, *, checkpoint: str) -> None:
  """Fills a built fine-tuned model from a transformers model directory of
  the matching class; the pooler, which `AlbertForQuestionAnswering` and
  `AlbertForTokenClassification` lack, keeps its initialisation (their
  heads do not read it)."""
  tensors, path = safetensors_io.read_weights(checkpoint)
  data = safetensors_io.read_config(checkpoint)
  kind = finetuned_names.head_kind(model)
  found = finetuned_names.kind_of_architecture(data.get("architectures"))
  if found != kind:
    raise ConversionError(
        f"{checkpoint}: config.json architectures "
        f"{data.get('architectures')} is not the {kind} head of this task "
        f"({finetuned_names.HUGGINGFACE.get(kind, kind)}); give the recipe of "
        "the task it was fine-tuned for"
    )
  config = model.encoder.config
  tensors = huggingface_names.split_aliases(tensors, source=path)
  tensors = huggingface_names.drop_identity_projection(
      tensors, config, source=path
  )
  head, table = _huggingface_finetuned_table(config, kind, path)
  weights = finetuned_names.finetuned_weights(model)
  if not head.pooler:
    weights = {
        n: v for n, v in weights.items() if not n.startswith("encoder/pooler")
    }
  shapes = {n: tuple(v.shape) for n, v in weights.items()}
  assign(weights, table.to_ours(tensors, shapes, source=path))
  logging.info("%s: %s, %d weights read", path, head.architecture, len(table))


def write_finetuned_dir(
    output_dir: str,
    model,
    *,
    step: int,
    model_config: Dict,
    files: Dict[str, str],
) -> str:
  """Writes a fine-tuning model directory of ours, as `run_finetuning`
  leaves one: `ckpt-{step}` of the model, its state file,
  `model_config.json` and the task's files (labels.json); eval, predict and
  export read it with the same recipe."""
  with staged(output_dir) as staging:
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model), staging, max_to_keep=None
    )
    path = manager.save(checkpoint_number=step)
    model_config_file.write(staging, model_config)
    for name, text in files.items():
      atomic_write.write_atomic(os.path.join(staging, name), text)
  return os.path.join(output_dir, os.path.basename(path))
