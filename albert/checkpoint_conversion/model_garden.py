"""The Model Garden's formats <-> our model directories.

  from_model_garden  object-based checkpoint of an `AlbertEncoder` or a
                     `BertPretrainerV2` + albert_config.json -> model dir
  to_model_garden    model dir -> object-based checkpoint that
                     `tf.train.Checkpoint(encoder=AlbertEncoder(...))` and
                     `tf.train.Checkpoint(**pretrainer.checkpoint_items)`
                     restore, + albert_config.json
  from_tf_hub        TF Hub / Kaggle SavedModel -> model dir: a TF2
                     SavedModel of the Model Garden's layout
                     (`export_tfhub_lib`), or a TF1 Hub module of the
                     original's `export_to_tfhub.py`

Checkpoints in the wild put the encoder at different depths: below
`encoder/` (the TF1 converter's `--converted_model=encoder`, training's
`checkpoint_items`), `encoder/encoder_network/` (the converter's
pretrainer), or elsewhere; the encoder is found by its shared block, and
the tied word embeddings wherever the checkpoint stored them.
"""

import os
import re
import shutil
from typing import Dict, Optional

from absl import logging
import numpy as np
import tensorflow as tf

from albert.checkpoint_conversion import model_io
from albert.checkpoint_conversion import model_garden_names as names
from albert.checkpoint_conversion import original_checkpoint
from albert.checkpoint_conversion import original_names
from albert.checkpoint_conversion import saved_model_reader
from albert.checkpoint_conversion.errors import ConversionError
from albert.checkpoint_conversion.name_table import name_list
from albert.modeling.config import AlbertConfig
from albert.modeling.weight_names import pretrainer_weights
from official.core import checkpoints

_VALUE = "/.ATTRIBUTES/VARIABLE_VALUE"
_BLOCK = re.compile(
    r"^(.*?)layer_with_weights-\d+/_attention_layer/_query_dense/kernel$"
)
_HEAD = re.compile(r"^(.*?)masked_lm/dense/kernel$")
_TIED = "masked_lm/embedding_table"  # the head's reference to the table
_WORD = "encoder/layer_with_weights-0/embeddings"


def _object_tensors(prefix: str) -> Dict[str, np.ndarray]:
  """Object path -> array of the weights an object-based checkpoint holds
  (optimizer slots and counters left out)."""
  try:
    reader = tf.train.load_checkpoint(prefix)
    keys = reader.get_variable_to_shape_map()
  except (tf.errors.OpError, ValueError) as e:
    raise ConversionError(f"cannot read checkpoint {prefix}: {e}") from e
  if original_checkpoint.OBJECT_GRAPH_KEY not in keys:
    raise ConversionError(
        f"{prefix} is a name-based (TF1) checkpoint, not a Model Garden "
        "object-based one; convert it with --from=original"
    )
  tensors = {
      k[: -len(_VALUE)]: np.asarray(reader.get_tensor(k))
      for k in keys
      if k.endswith(_VALUE) and ".OPTIMIZER_SLOT" not in k
  }
  skipped = len(keys) - len(tensors) - 1
  if skipped:
    logging.info("%s: %d optimizer slots left out", prefix, skipped)
  return tensors


def _one_prefix(pattern, paths, prefix: str, what: str) -> Optional[str]:
  """What precedes the one path that matches `pattern`, or None."""
  matches = sorted(p for p in paths if pattern.match(p))
  if len(matches) > 1:
    raise ConversionError(
        f"{prefix}: {what} found {len(matches)} times "
        f"({name_list(matches)}): not one ALBERT with one shared block (a "
        "BERT, or several models?)"
    )
  return pattern.match(matches[0]).group(1) if matches else None


def _normalized(tensors: Dict[str, np.ndarray], prefix: str):
  """The checkpoint's weights under `encoder/` and `masked_lm/`, the table's
  layout; everything else (save counters, the step) left out."""
  block = _one_prefix(_BLOCK, tensors, prefix, "an attention block")
  if block is None:
    raise ConversionError(
        f"{prefix}: no ALBERT encoder in it (no "
        "layer_with_weights-N/_attention_layer/_query_dense/kernel): not a "
        "Model Garden AlbertEncoder or BertPretrainerV2 checkpoint"
    )
  head = _one_prefix(_HEAD, tensors, prefix, "a masked-LM head")
  out = {}
  for path, array in tensors.items():
    if path.startswith(block) and path[len(block) :].startswith("layer_"):
      out["encoder/" + path[len(block) :]] = array
    elif head is not None and path.startswith(head + "masked_lm/"):
      out[path[len(head) :]] = array
  tied = out.pop(_TIED, None)
  if tied is not None:
    if _WORD not in out:
      out[_WORD] = tied
    elif not np.array_equal(out[_WORD], tied):
      raise ConversionError(
          f"{prefix}: the masked-LM head's embedding_table differs from the "
          "encoder's word embeddings; they are one matrix in ALBERT"
      )
  return out, head is not None


def from_model_garden(
    *, checkpoint: str, albert_config: Optional[str], output_dir: str
) -> str:
  """Converts a Model Garden object-based checkpoint into a model directory.

  Args:
    checkpoint: the checkpoint prefix (`DIR/ckpt-1`), its `.index`, or a
      directory with a `checkpoint` state file.
    albert_config: its albert_config.json (the number of layers and the
      activation are not in the weights); None: the one beside it.
    output_dir: the model directory to create (must not exist or be empty).

  Returns:
    The checkpoint prefix written (`OUTPUT_DIR/ckpt-0`).
  """
  model_io.check_output_dir(output_dir)
  prefix = original_checkpoint.resolve_prefix(checkpoint)
  config = _read_config(albert_config, checkpoint)
  tensors, has_head = _normalized(_object_tensors(prefix), prefix)
  table = names.object_table(config)
  return _write(config, table, tensors, prefix, output_dir, has_head)


def _read_config(path: Optional[str], checkpoint: str) -> AlbertConfig:
  config = model_io.read_config_file(path, checkpoint)
  names.check_config(config, path or checkpoint)
  return config


def _write(config, table, tensors, source, output_dir, has_head) -> str:
  absent = []
  if not has_head:
    absent.append("masked-LM head (it holds an encoder alone)")
  absent.append("sentence-order head (the Model Garden's ALBERT has none)")
  return model_io.write_imported(
      config,
      table,
      tensors,
      source=source,
      output_dir=output_dir,
      may_lack=[] if has_head else names.mlm_names(table),
      absent=absent,
      uncovered=names.SENTENCE_ORDER_WEIGHTS,
  )


def to_model_garden(*, checkpoint: str, output_dir: str) -> str:
  """Writes a model directory's checkpoint as a Model Garden checkpoint.

  Args:
    checkpoint: a model directory (its latest checkpoint) or a `ckpt-N`
      prefix inside one.
    output_dir: gets `ckpt-N.{index,data-*}` (the encoder below `encoder/`,
      the masked-LM head below `masked_lm/`, as `pretrainer.
      checkpoint_items` names them), the `checkpoint` state file and
      albert_config.json (must not exist or be empty).

  Returns:
    The checkpoint prefix written.
  """
  model_io.check_output_dir(output_dir)
  pretrainer, config, path = model_io.load_model(checkpoint)
  names.check_config(config, path)
  weights = pretrainer_weights(pretrainer)
  for name in names.SENTENCE_ORDER_WEIGHTS:
    del weights[name]
  logging.info(
      "%s: the sentence-order head is not written (the Model "
      "Garden's ALBERT has none)",
      path,
  )
  table = names.object_table(config)
  tensors = table.to_external({n: v.numpy() for n, v in weights.items()})
  step = checkpoints.step_of(path)
  root = _trackables(tensors)
  with model_io.staged(output_dir) as staging:
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(**root), staging, max_to_keep=None
    )
    written = manager.save(checkpoint_number=step)
    # The original's albert_config.json, which the Model Garden's
    # `official.legacy.albert.configs.AlbertConfig` reads.
    config.replace(
        hidden_act=names.ACTIVATIONS_OUT[config.hidden_act]
    ).to_json_file(os.path.join(staging, "albert_config.json"))
  logging.info("%s: %d tensors written", written, len(tensors))
  return os.path.join(output_dir, os.path.basename(written))


def _trackables(tensors: Dict[str, np.ndarray]) -> Dict[str, tf.Module]:
  """Objects whose attribute paths are the tensors' object paths, holding
  them as variables; the head's `embedding_table` is the encoder's word
  embedding variable itself (stored once, as the Model Garden stores it)."""
  roots = {}
  variables = {}
  for path in sorted(tensors):
    parts = [_unescape(p) for p in path.split("/")]
    node = roots.setdefault(parts[0], tf.Module())
    for part in parts[1:-1]:
      child = vars(node).get(part)
      if child is None:
        child = tf.Module()
        setattr(node, part, child)
      node = child
    variables[path] = tf.Variable(tensors[path], name=parts[-1])
    setattr(node, parts[-1], variables[path])
  roots["masked_lm"].embedding_table = variables[_WORD]
  return roots


def _unescape(part: str) -> str:
  """A checkpoint key's component -> the attribute name (`.S` is `/`)."""
  return part.replace(".S", "/").replace("..", ".")


# --- TF Hub -------------------------------------------------------------------


def from_tf_hub(
    *, checkpoint: str, albert_config: Optional[str], output_dir: str
) -> str:
  """Converts a TF Hub SavedModel (TF2 or TF1 Hub format) of ALBERT.

  Args:
    checkpoint: the SavedModel directory (unpacked from TF Hub or Kaggle).
    albert_config: an albert_config.json; needed only when the SavedModel
      does not say its architecture (the TF2 format keeps it in its Keras
      metadata, the TF1 format as an asset).
    output_dir: the model directory to create; gets the SentencePiece
      model of the SavedModel's assets too.

  Returns:
    The checkpoint prefix written (`OUTPUT_DIR/ckpt-0`).
  """
  model_io.check_output_dir(output_dir)
  hub = saved_model_reader.open_saved_model(checkpoint)
  if hub.tf1_module:
    config = _tf1_config(hub, albert_config)
    original_names.check_config(config, hub.directory)
    tensors = hub.tf1_variables()
    tensors.pop(original_names.GLOBAL_STEP, None)
    written = model_io.write_imported(
        config,
        original_names.name_table(config),
        tensors,
        source=hub.variables_prefix,
        output_dir=output_dir,
    )
  else:
    config = _tf2_config(hub, albert_config)
    names.check_config(config, hub.directory)
    tensors = _mlm_scope(hub.tf2_variables(), hub.directory)
    table = names.variable_table(config)
    has_head = any(n in tensors for n in names.mlm_names(table))
    written = _write(
        config, table, tensors, hub.directory, output_dir, has_head
    )
  for asset in hub.sentencepiece_models():
    shutil.copy(asset, os.path.join(output_dir, os.path.basename(asset)))
    logging.info("Copied the SentencePiece model %s", asset)
  return written


def _tf1_config(hub, albert_config) -> AlbertConfig:
  if albert_config:
    return model_io.read_config_file(albert_config, hub.directory)
  path = hub.asset("albert_config.json")
  if path is None:
    raise ConversionError(
        f"{hub.directory}: a TF1 Hub module without assets/albert_config.json;"
        " give --albert_config=PATH (the config of the released model)"
    )
  return model_io.read_config_file(path, hub.directory)


def _tf2_config(hub, albert_config) -> AlbertConfig:
  if albert_config:
    return model_io.read_config_file(albert_config, hub.directory)
  keras = hub.keras_config(names.ENCODER_CLASSES)
  if keras is None:
    encoders = [c for c in hub.keras_classes() if c.endswith("Encoder")]
    if encoders:  # e.g. Text>BertEncoder: another model
      raise ConversionError(
          f"{hub.directory}: its encoder is {', '.join(encoders)}, not an "
          "AlbertEncoder: not an ALBERT SavedModel"
      )
    raise ConversionError(
        f"{hub.directory}: no Keras metadata describes its encoder; give "
        "--albert_config=PATH (the model's albert_config.json)"
    )
  config = names.config_from_keras(keras, source=hub.directory)
  if config is None:
    raise ConversionError(
        f"{hub.directory}: its encoder's activation {keras.get('activation')}"
        f" has no name of ours; give --albert_config=PATH with hidden_act"
    )
  return config


def _mlm_scope(tensors: Dict[str, np.ndarray], source: str):
  """The masked-LM head's variables under MLM_SCOPE, whatever scope the
  pretrainer had (`bert/cls/predictions/...`)."""
  out = {}
  for name, array in tensors.items():
    if names.MLM_SCOPE in name and not name.startswith(names.MLM_SCOPE):
      name = name[name.index(names.MLM_SCOPE) :]
    if name in out:
      raise ConversionError(f"{source}: variable {name} appears twice")
    out[name] = array
  return out
