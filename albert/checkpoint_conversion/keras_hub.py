"""keras-hub preset directories <-> our model directories.

  from_keras_hub   a preset that keras-hub's `save_to_preset` wrote (config.json
                   + model.weights.h5 of an `AlbertBackbone`) -> model dir
  to_keras_hub     model dir -> a preset `keras_hub.models.AlbertBackbone.
                   from_preset(DIR)` loads (and, with the SentencePiece model,
                   `keras_hub.models.AlbertTokenizer.from_preset(DIR)`)
  finetuned_from_keras_hub / finetuned_to_keras_hub
                   the same for a fine-tuned classifier
                   (`AlbertTextClassifier`: task.json + task.weights.h5)

Weights files are read and written with h5py (TensorFlow's own dependency);
neither Keras 3 nor keras-hub is imported.
"""

import datetime
import json
import os
import shutil
from typing import Dict, List, Optional, Tuple

from absl import logging
import h5py
import numpy as np

from albert.checkpoint_conversion import model_io
from albert.checkpoint_conversion import finetuned_names
from albert.checkpoint_conversion import keras_hub_names as names
from albert.checkpoint_conversion.errors import ConversionError
from albert.modeling.weight_names import MASKED_LM_WEIGHTS
from albert.modeling.weight_names import SENTENCE_ORDER_WEIGHTS
from albert.modeling.weight_names import pretrainer_weights
from official.io import atomic_write

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.weights.h5"
TASK_FILE = "task.json"
TASK_WEIGHTS_FILE = "task.weights.h5"
_TASKS = ["MaskedLM", "TextClassifier"]  # keras-hub's tasks for ALBERT


def _read_json(path: str) -> Dict:
  try:
    with open(path, encoding="utf-8") as f:
      return json.load(f)
  except FileNotFoundError:
    raise ConversionError(
        f"{path} not found: not a keras-hub preset directory (give the "
        "directory save_to_preset wrote)"
    ) from None
  except (OSError, ValueError) as e:
    raise ConversionError(f"{path}: not readable JSON ({e})") from e


def _read_weights(path: str) -> Dict[str, np.ndarray]:
  """Dataset path -> array of every dataset in a Keras 3 weights file."""
  tensors = {}
  try:
    with h5py.File(path, "r") as f:
      f.visititems(
          lambda name, obj: tensors.__setitem__(name, np.asarray(obj))
          if isinstance(obj, h5py.Dataset)
          else None
      )
  except FileNotFoundError:
    raise ConversionError(
        f"{path} not found: the preset has no weights"
    ) from None
  except OSError as e:
    raise ConversionError(
        f"{path}: not a readable HDF5 weights file ({e})"
    ) from e
  return tensors


def _write_weights(
    path: str, groups: List[Tuple[str, str]], tensors: Dict[str, np.ndarray]
) -> None:
  """A Keras 3 weights file: these groups (with their layer name) and
  datasets, nothing else."""
  with h5py.File(path, "w") as f:
    for group, name in groups:
      f.require_group(group).attrs["name"] = name
    for key, array in tensors.items():
      f.create_dataset(key, data=array)


def _metadata(tasks: List[str], count: int) -> str:
  data = dict(
      names.VERSIONS,
      parameter_count=count,
      date_saved=datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
      tasks=tasks,
  )
  return json.dumps(data, indent=4) + "\n"


def read_backbone(directory: str):
  """(config, tensors of the backbone without an identity projection)."""
  path = os.path.join(directory, CONFIG_FILE)
  config = names.config_from_keras_hub(_read_json(path), source=path)
  names.check_config(config, path)
  weights = os.path.join(directory, WEIGHTS_FILE)
  tensors = names.drop_identity_projection(
      _read_weights(weights), config, source=weights
  )
  return config, tensors, weights


def from_keras_hub(*, checkpoint: str, output_dir: str) -> str:
  """Converts a keras-hub ALBERT preset directory into a model directory.

  A preset holds the backbone: the pretraining heads are kept freshly
  initialised (with a warning). A classifier preset's head is read as a
  fine-tuned model (`finetuned_from_keras_hub`, with the task's recipe).
  The preset's SentencePiece model is copied as `vocabulary.spm`.

  Returns:
    The checkpoint prefix written (`OUTPUT_DIR/ckpt-0`).
  """
  model_io.check_output_dir(output_dir)
  config, tensors, source = read_backbone(checkpoint)
  if os.path.isfile(os.path.join(checkpoint, TASK_FILE)):
    logging.info(
        "%s: the task's head is not read into a pretraining model (give the "
        "task's recipe with --gin_file to keep it)",
        checkpoint,
    )
  written = model_io.write_imported(
      config,
      names.name_table(config),
      tensors,
      source=source,
      output_dir=output_dir,
      absent=["masked-LM head", "sentence-order head"],
      uncovered=MASKED_LM_WEIGHTS + SENTENCE_ORDER_WEIGHTS,
      note="a backbone alone",
  )
  copy_vocabulary(checkpoint, output_dir)
  return written


def copy_vocabulary(preset: str, output_dir: str) -> None:
  """The preset's SentencePiece model, if any, into `output_dir`."""
  source = os.path.join(preset, names.VOCABULARY_ASSET)
  if os.path.isfile(source):
    shutil.copy(source, os.path.join(output_dir, "vocabulary.spm"))
    logging.info("Copied the SentencePiece model %s", source)


def _write_backbone(staging, config, tensors, spm_model_file, tasks) -> None:
  """config.json, model.weights.h5, metadata.json [, tokenizer]."""
  atomic_write.write_atomic(
      os.path.join(staging, CONFIG_FILE),
      json.dumps(names.backbone_config(config), indent=4) + "\n",
  )
  _write_weights(
      os.path.join(staging, WEIGHTS_FILE),
      names.backbone_groups(config),
      tensors,
  )
  count = sum(int(np.prod(a.shape)) for a in tensors.values())
  atomic_write.write_atomic(
      os.path.join(staging, "metadata.json"), _metadata(tasks, count)
  )
  if spm_model_file:
    asset = os.path.join(staging, names.VOCABULARY_ASSET)
    os.makedirs(os.path.dirname(asset))
    shutil.copy(spm_model_file, asset)
    atomic_write.write_atomic(
        os.path.join(staging, "tokenizer.json"),
        json.dumps(names.tokenizer_config(), indent=4) + "\n",
    )
  else:
    logging.warning(
        "No --spm_model_file: the preset has no tokenizer (keras-hub loads "
        "the backbone; its tokenizer and preprocessors need the "
        "SentencePiece model)"
    )


def _backbone_tensors(weights, config) -> Dict[str, np.ndarray]:
  encoder = {
      n: v.numpy() for n, v in weights.items() if n.startswith("encoder/")
  }
  tensors = names.name_table(config).to_external(encoder)
  tensors.update(names.projection_identity(config))
  return tensors


def _check_spm(spm_model_file: Optional[str]) -> None:
  if spm_model_file and not os.path.isfile(spm_model_file):
    raise ConversionError(
        f"--spm_model_file={spm_model_file} not found; give the model's "
        "SentencePiece model, or leave the flag out for no tokenizer"
    )


def to_keras_hub(
    *, checkpoint: str, output_dir: str, spm_model_file: Optional[str] = None
) -> str:
  """Writes a model directory's encoder as a keras-hub `AlbertBackbone`
  preset (the pretraining heads have no place in it: keras-hub's masked-LM
  task builds its own).

  Returns:
    The preset directory written.
  """
  model_io.check_output_dir(output_dir)
  _check_spm(spm_model_file)
  pretrainer, config, path = model_io.load_model(checkpoint)
  names.check_config(config, path)
  tensors = _backbone_tensors(pretrainer_weights(pretrainer), config)
  with model_io.staged(output_dir) as staging:
    _write_backbone(staging, config, tensors, spm_model_file, _TASKS)
  logging.info(
      "%s: AlbertBackbone preset, %d tensors", output_dir, len(tensors)
  )
  return output_dir


def finetuned_to_keras_hub(
    model,
    config,
    *,
    source: str,
    output_dir: str,
    seq_length: int,
    spm_model_file: Optional[str] = None,
) -> str:
  """Writes a fine-tuned sequence classifier (or regressor) as a keras-hub
  `AlbertTextClassifier` preset: the backbone files, task.json and
  task.weights.h5 (and, with the SentencePiece model, its preprocessor)."""
  model_io.check_output_dir(output_dir)
  _check_spm(spm_model_file)
  names.check_config(config, source)
  kind = finetuned_names.head_kind(model)
  if kind != "sequence_classification":
    raise ConversionError(
        f"{source}: keras-hub has an ALBERT class for sequence classification "
        f"only (AlbertTextClassifier), not for the {kind} head"
    )
  weights = finetuned_names.finetuned_weights(model)
  tensors = _backbone_tensors(weights, config)
  head = names.classifier_table().to_external(
      {n: weights[n].numpy() for n in ("classifier/kernel", "classifier/bias")}
  )
  preprocessor = (
      names.preprocessor_config(seq_length) if spm_model_file else None
  )
  task = names.classifier_config(
      config, int(model.num_classes), float(model.dropout_rate), preprocessor
  )
  with model_io.staged(output_dir) as staging:
    _write_backbone(staging, config, tensors, spm_model_file, _TASKS)
    atomic_write.write_atomic(
        os.path.join(staging, TASK_FILE), json.dumps(task, indent=4) + "\n"
    )
    _write_weights(
        os.path.join(staging, TASK_WEIGHTS_FILE),
        names.classifier_groups(),
        head,
    )
    if preprocessor:
      atomic_write.write_atomic(
          os.path.join(staging, "preprocessor.json"),
          json.dumps(preprocessor, indent=4) + "\n",
      )
  logging.info(
      "%s: AlbertTextClassifier preset (%d classes)",
      output_dir,
      int(model.num_classes),
  )
  return output_dir


def finetuned_from_keras_hub(model, *, checkpoint: str) -> None:
  """Fills a built fine-tuned sequence classifier from a keras-hub
  `AlbertTextClassifier` preset (backbone and head)."""
  kind = finetuned_names.head_kind(model)
  task_path = os.path.join(checkpoint, TASK_FILE)
  task = _read_json(task_path)
  if (
      kind != "sequence_classification"
      or task.get("class_name") != names.CLASSIFIER[1]
  ):
    raise ConversionError(
        f"{task_path}: class_name={task.get('class_name')!r}; only "
        f"{names.CLASSIFIER[1]} presets convert, into a sequence "
        f"classification task (this recipe's head is {kind})"
    )
  config, tensors, source = read_backbone(checkpoint)
  table = names.name_table(config)
  weights = finetuned_names.finetuned_weights(model)
  encoder = {n: v for n, v in weights.items() if n.startswith("encoder/")}
  model_io.assign(
      encoder,
      table.to_ours(
          tensors,
          {n: tuple(v.shape) for n, v in encoder.items()},
          source=source,
      ),
  )
  head = {n: weights[n] for n in ("classifier/kernel", "classifier/bias")}
  task_weights = os.path.join(checkpoint, TASK_WEIGHTS_FILE)
  found = {
      k: v
      for k, v in _read_weights(task_weights).items()
      if not k.startswith("optimizer/")
  }
  model_io.assign(
      head,
      names.classifier_table().to_ours(
          found,
          {n: tuple(v.shape) for n, v in head.items()},
          source=task_weights,
      ),
  )
  logging.info("%s: AlbertTextClassifier read", checkpoint)
