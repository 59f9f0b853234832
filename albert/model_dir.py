"""A model directory: the checkpoints and configs of one ALBERT model.

What `albert.run_pretraining` (through `official.core.trainer`) writes and
what the checkpoint converter writes, so that export, fine-tuning and
further pretraining read both the same way:

  ckpt-N.index, ckpt-N.data-*  tf.train.Checkpoint(model=AlbertPretrainer
                               [, optimizer=LAMB]); N is the training step
  checkpoint                   the state file tf.train.latest_checkpoint reads
  model_config.json            AlbertConfig.to_dict(): what model this is
  operative_config.gin         gin bindings (at least AlbertConfig.*)
  albert_config.json           the original format (converter only)
  30k-clean.model / vocab*.txt the tokenizer, where a conversion of a
                               released model copied it (`tokenizer_files`)
  embedding.json               an embedding model's settings: pooling,
                               normalize, max_seq_length, do_lower_case
                               (`read_embedding`)

`load_pretrainer(model_dir)` is the one public way to get the model back.
"""

import json
import os
import re
from typing import Any, Dict, Optional, Tuple

import tensorflow as tf

from albert.modeling.config import AlbertConfig
from albert.modeling.pretrainer import AlbertPretrainer
from official.io import atomic_write
from official.io import files
from official.core import checkpoint_damage
from official.core import checkpoints
from official.core import model_config_file
from official.errors import InputError
from official.errors import first_line
from official.modeling import precision as precision_lib

GIN_FILE = "operative_config.gin"
ALBERT_CONFIG_FILE = "albert_config.json"


def read_model_config(model_dir: str) -> AlbertConfig:
  """The `AlbertConfig` in MODEL_DIR/model_config.json.

  Raises:
    ValueError: the file is missing, unreadable or holds unknown fields.
  """
  path = model_config_file.path(model_dir)
  fields = model_config_file.read(model_dir)
  if fields is None:
    raise ValueError(
        f"{path} not found: {model_dir} is not a model "
        "directory (it is written by run_pretraining and "
        "tools/convert_checkpoint.py)"
    )
  known = AlbertConfig.__dataclass_fields__
  unknown = sorted(set(fields) - set(known))
  if unknown:
    raise ValueError(f"{path}: unknown AlbertConfig fields {unknown}")
  try:
    return AlbertConfig.explicit(**fields)
  except (TypeError, ValueError) as e:
    raise ValueError(f"{path}: {e}") from e


def split_checkpoint(checkpoint: str) -> Tuple[str, Optional[str]]:
  """(model directory, checkpoint prefix or None) of a `--checkpoint` that
  is either a model directory (its latest) or a `ckpt-N` prefix in one."""
  if files.isdir(checkpoint):
    return checkpoint, None
  return os.path.dirname(checkpoint) or ".", checkpoint


def checkpoint_path(model_dir: str, checkpoint: Optional[str] = None) -> str:
  """The checkpoint prefix to read: `checkpoint` (a prefix, or a directory:
  its latest), else the latest in model_dir (`checkpoints.resolve`)."""
  return checkpoints.resolve(checkpoint or model_dir)


def load_pretrainer(
    model_dir: str,
    checkpoint: Optional[str] = None,
    config: Optional[AlbertConfig] = None,
    precision: str = "float32",
) -> Tuple[AlbertPretrainer, AlbertConfig]:
  """Builds the model of a model directory and restores its weights.

  Args:
    model_dir: a directory written by `albert.run_pretraining` or by
      `tools/convert_checkpoint.py`; its `model_config.json` gives the model.
    checkpoint: a checkpoint prefix (e.g. `MODEL_DIR/ckpt-1000`); the latest
      one in `model_dir` when None.
    config: the architecture, when it should not come from model_config.json
      (e.g. from gin files).
    precision: `float32` or `bfloat16` (`official.modeling.precision`): the
      model computes in bfloat16 (LayerNorm and softmax in float32) on the
      checkpoint's float32 weights.

  Returns:
    (the `AlbertPretrainer` with restored weights, its `AlbertConfig`). Use
    `.encoder` for the backbone. Optimizer state in the checkpoint is ignored.

  Raises:
    ValueError: one line naming the missing or mismatching file.

  Example (a directory written here; `run_pretraining` and
  `tools/convert_checkpoint.py` write the same):

  >>> import os, tempfile
  >>> from albert import model_dir
  >>> from albert.modeling.config import AlbertConfig
  >>> from albert.modeling.pretrainer import AlbertPretrainer
  >>> config = AlbertConfig(vocab_size=100, embedding_size=8, hidden_size=16,
  ...                       num_layers=2, num_heads=2, intermediate_size=32)
  >>> directory = os.path.join(tempfile.mkdtemp(), "model")
  >>> prefix = model_dir.write_model_dir(
  ...     directory, AlbertPretrainer.from_config_object(config), step=7)
  >>> os.path.basename(prefix)
  'ckpt-7'
  >>> pretrainer, config = model_dir.load_pretrainer(directory)
  >>> config.hidden_size, type(pretrainer.encoder).__name__
  (16, 'AlbertEncoder')
  """
  policy = precision_lib.serving_policy(precision)
  config = config or read_model_config(model_dir)
  path = checkpoint_path(model_dir, checkpoint)
  with precision_lib.policy_scope(policy):
    pretrainer = AlbertPretrainer.from_config_object(config)
  restore_matched(
      tf.train.Checkpoint(model=pretrainer),
      path,
      f"checkpoint {path} does not hold every weight of the model "
      f"in {model_config_file.FILE_NAME}",
  )
  return pretrainer, config


def restore_matched(
    checkpoint: tf.train.Checkpoint, path: str, problem: str
) -> None:
  """Reads `path` into `checkpoint`; every object it tracks must get a value.

  Values in the file that nothing tracks (heads of another task, optimizer
  slots) are ignored.

  Raises:
    DamagedFileError: a file of the checkpoint is truncated or corrupt (the
      message names it).
    ValueError: "`problem`: <first line of TensorFlow's reason>".
  """
  try:
    status = checkpoint.read(path)
    status.assert_existing_objects_matched()
  except (AssertionError, ValueError, IndexError, tf.errors.OpError) as e:
    checkpoint_damage.raise_if_damaged(path, e)
    raise ValueError(f"{problem}: {first_line(e)}") from e
  status.expect_partial()


# The tokenizer files a model directory may carry (a conversion of a
# released model copies the release's): a SentencePiece model, else a
# WordPiece vocabulary.
SPM_PATTERN = "*.model"
VOCAB_PATTERN = "vocab*.txt"


def tokenizer_files(model_dir: str) -> Tuple[Optional[str], Optional[str]]:
  """(SentencePiece model, WordPiece vocab.txt) that MODEL_DIR carries: the
  one `*.model`, else the one `vocab*.txt`; (None, None) when it carries
  neither or several of a kind (then the flags must say which)."""
  for pattern, spm in ((SPM_PATTERN, True), (VOCAB_PATTERN, False)):
    found = files.glob(os.path.join(files.escape(model_dir), pattern))
    if len(found) == 1:
      return (found[0], None) if spm else (None, found[0])
    if found:
      return None, None
  return None, None


EMBEDDING_FILE = "embedding.json"
EMBEDDING_DEFAULTS = {
    "pooling": "mean",
    "normalize": False,
    "max_seq_length": None,  # None: the model's max_position_embeddings
    "do_lower_case": True,
}


def read_embedding(model_dir: str) -> Optional[Dict[str, Any]]:
  """MODEL_DIR/embedding.json (an embedding model's settings, filled in
  with EMBEDDING_DEFAULTS), None when the directory holds none.

  Raises:
    InputError: the file is not JSON or holds unknown settings.
  """
  path = os.path.join(model_dir, EMBEDDING_FILE)
  if not files.exists(path):
    return None
  try:
    fields = json.loads(files.read_text(path))
  except json.JSONDecodeError as e:
    raise InputError(
        f"{path}: not JSON ({e.msg}); reconvert the model"
    ) from None
  unknown = sorted(set(fields) - set(EMBEDDING_DEFAULTS) - {"source"})
  if not isinstance(fields, dict) or unknown:
    raise InputError(
        f"{path}: unknown settings {unknown}; it holds "
        f"{sorted(EMBEDDING_DEFAULTS)}"
    )
  return {**EMBEDDING_DEFAULTS, **fields}


def recorded_seq_length(model_dir: str) -> Optional[int]:
  """The sequence length MODEL_DIR's model was trained at, as its recorded
  recipe (operative_config.gin) binds it (`PretrainTask.seq_length`, a
  fine-tuning task's); None when it records none (a conversion's)."""
  path = os.path.join(model_dir, GIN_FILE)
  if not files.exists(path):
    return None
  found = re.findall(
      r"(?m)^\w*Task\.seq_length = (\d+)\s*$", files.read_text(path)
  )
  return int(found[-1]) if found else None


def config_gin(config: AlbertConfig) -> str:
  """`AlbertConfig.*` gin bindings that rebuild `config` exactly."""
  lines = ["# Parameters for AlbertConfig:", "# " + "=" * 78]
  lines += [
      f"AlbertConfig.{key} = {value!r}"
      for key, value in sorted(config.to_dict().items())
  ]
  return "\n".join(lines) + "\n"


def write_model_dir(
    model_dir: str,
    pretrainer: AlbertPretrainer,
    *,
    optimizer=None,
    step: int = 0,
) -> str:
  """Writes a model directory: `ckpt-{step}`, state file and config files.

  Args:
    model_dir: the directory (created if needed; meant to be new).
    pretrainer: the model, built from its config.
    optimizer: a built LAMB optimizer whose state to save with the model, or
      None for the weights alone.
    step: N of `ckpt-N`; the training step (`optimizer.iterations` should
      hold the same value when an optimizer is given).

  Returns:
    The checkpoint prefix written.
  """
  files.makedirs(model_dir)
  config = pretrainer.encoder.config
  objects = {"model": pretrainer}
  if optimizer is not None:
    objects["optimizer"] = optimizer
  manager = tf.train.CheckpointManager(
      tf.train.Checkpoint(**objects), model_dir, max_to_keep=None
  )
  path = manager.save(checkpoint_number=step)
  # The trainer's own file, so a trainer resuming here accepts the directory.
  model_config_file.write(model_dir, config.to_dict())
  atomic_write.write_atomic(
      os.path.join(model_dir, GIN_FILE), config_gin(config)
  )
  config.to_json_file(os.path.join(model_dir, ALBERT_CONFIG_FILE))
  return path
