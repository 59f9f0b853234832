"""transformers ALBERT model directories (config.json, model.safetensors or
pytorch_model.bin) <-> ours, for pretrained models (`AlbertForPreTraining`)
and fine-tuned ones (the transformers class of the task's head).

  from_huggingface            transformers directory -> model dir
  to_huggingface              model dir -> config.json + model.safetensors
  read_config                 a transformers directory's AlbertConfig
  finetuned_from_huggingface  a directory of the head's class -> a built
                              fine-tuned model
  finetuned_to_huggingface    a fine-tuned model -> a directory of its class

Every tensor is checked for name and shape on the way (`huggingface_names`).
"""

import os
from typing import List, Optional

from absl import logging

from albert.checkpoint_conversion import finetuned_names
from albert.checkpoint_conversion import huggingface_names
from albert.checkpoint_conversion import model_io
from albert.checkpoint_conversion import safetensors_io
from albert.checkpoint_conversion.errors import ConversionError
from albert.checkpoint_conversion.name_table import NameTable
from albert.modeling.config import AlbertConfig
from albert.modeling.weight_names import pretrainer_weights


def from_huggingface(
    *, checkpoint: str, output_dir: str, extra_files=None
) -> str:
  """Converts a transformers ALBERT model directory into a model directory.

  Args:
    checkpoint: the directory with `config.json` and `model.safetensors` (or
      `pytorch_model.bin`, read only when torch is installed).
    output_dir: the model directory to create (must not exist or be empty).

  Returns:
    The checkpoint prefix written (`OUTPUT_DIR/ckpt-0`).
  """
  model_io.check_output_dir(output_dir)
  tensors, path = safetensors_io.read_weights(checkpoint)
  config = read_config(checkpoint)
  tensors = huggingface_names.with_model_prefix(tensors)
  tensors = huggingface_names.split_aliases(tensors, source=path)
  tensors = huggingface_names.drop_identity_projection(
      tensors, config, source=path
  )
  table = huggingface_names.name_table(config)
  absent = huggingface_names.absent_heads(tensors)
  may_lack = huggingface_names.head_names(absent)
  if not any(n.startswith(huggingface_names.MLM_PREFIX) for n in tensors):
    # A bare AlbertModel (a sentence-transformers model, an encoder-only
    # repository): the masked-LM head stays freshly initialised too.
    absent.append(huggingface_names.MLM_PREFIX.rstrip("."))
    may_lack += [
        e.external
        for e in table.entries
        if e.external.startswith(huggingface_names.MLM_PREFIX)
    ]
  return model_io.write_imported(
      config,
      table,
      tensors,
      source=path,
      output_dir=output_dir,
      may_lack=may_lack,
      absent=absent,
      note="not an AlbertForPreTraining",
      tokenizer_folder=checkpoint,
      extra_files=extra_files,
  )


def to_huggingface(*, checkpoint: str, output_dir: str) -> str:
  """Writes a model directory's checkpoint as a transformers model directory.

  Args:
    checkpoint: a model directory (its latest checkpoint) or a `ckpt-N`
      prefix inside one.
    output_dir: gets `config.json` and `model.safetensors`, which
      `transformers.AlbertForPreTraining.from_pretrained` loads.

  Returns:
    The safetensors file written.
  """
  model_io.check_output_dir(output_dir)
  pretrainer, config, path = model_io.load_model(checkpoint)
  data = huggingface_names.config_to_huggingface(config, what=path)
  table = huggingface_names.name_table(config)
  weights = pretrainer_weights(pretrainer)
  tensors = table.to_external({n: v.numpy() for n, v in weights.items()})
  tensors.update(huggingface_names.projection_identity(config))
  with model_io.staged(output_dir) as staging:
    safetensors_io.write_weights(staging, tensors)
    safetensors_io.write_config(staging, data)
  logging.info("%s: %d tensors written", output_dir, len(tensors))
  return os.path.join(output_dir, safetensors_io.SAFETENSORS_FILE)


def read_config(checkpoint: str) -> AlbertConfig:
  """The AlbertConfig of a transformers model directory's config.json."""
  return huggingface_names.config_from_huggingface(
      safetensors_io.read_config(checkpoint),
      source=os.path.join(checkpoint, safetensors_io.CONFIG_FILE),
  )


def _huggingface_finetuned_table(config: AlbertConfig, kind: str, what: str):
  head, head_entries = finetuned_names.huggingface_head(kind, what)
  exclude = ("predictions.", "sop_classifier.")
  if not head.pooler:
    exclude += ("albert.pooler.",)
  entries = model_io.encoder_part(huggingface_names.name_table(config), exclude)
  return head, NameTable(
      entries + head_entries, format_name=huggingface_names.FORMAT_NAME
  )


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
  model_io.check_output_dir(output_dir)
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
  with model_io.staged(output_dir) as staging:
    safetensors_io.write_weights(staging, tensors)
    safetensors_io.write_config(staging, data)
  logging.info(
      "%s: %s, %d tensors written", output_dir, head.architecture, len(tensors)
  )
  return os.path.join(output_dir, safetensors_io.SAFETENSORS_FILE)


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
  model_io.assign(weights, table.to_ours(tensors, shapes, source=path))
  logging.info("%s: %s, %d weights read", path, head.architecture, len(table))
