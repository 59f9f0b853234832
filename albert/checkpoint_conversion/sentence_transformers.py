"""sentence-transformers model directories <-> ours, without torch.

A sentence-transformers directory (`SentenceTransformer.save`) lists its
modules in `modules.json`: a Transformer (an ALBERT's transformers files,
usually at the root, with `spiece.model` beside `tokenizer.json` as the
released ALBERT sentence models ship it), a Pooling module (its
`config.json`: one of mean, CLS, max, mean-sqrt-len) and optionally
Normalize. Both its formats are read: the one of sentence-transformers
before 6 (`sentence_transformers.models.*`, `pooling_mode_*_tokens` flags,
`sentence_bert_config.json` with `max_seq_length`) and 6's
(`sentence_transformers.base.modules...`, `"pooling_mode": "mean"`, the
length as the tokenizer's `model_max_length`). Any other module (a Dense
layer, a second Transformer) is refused in one line.

  from_sentence_transformers  -> a model directory of ours whose
                                 embedding.json records the pooling,
                                 normalisation, maximum length and
                                 lower-casing
  finetuned_to_sentence_transformers  a trained embedder (fine-tuning's
                                 sentence_embedding task) -> the same
  to_sentence_transformers    a model directory of ours -> a directory
                                 `SentenceTransformer(path)` loads (the
                                 format before 6, which 6 reads too), its
                                 tokenizer in tokenizer.json
                                 (`hf_tokenizer`)
"""

import json
import os
import shutil
import tempfile
from typing import Any, Dict

from absl import logging

from albert import model_dir as model_dir_lib
from albert.checkpoint_conversion import hf_tokenizer
from albert.checkpoint_conversion import huggingface
from albert.checkpoint_conversion import model_io
from albert.checkpoint_conversion.errors import ConversionError
from albert.modeling.pooling import MODES
from albert.modeling.pretrainer import AlbertPretrainer

MODULES_FILE = "modules.json"
ST_CONFIG_FILE = "sentence_bert_config.json"
SPM_FILE = "spiece.model"
# Pooling flags of the format before 6 -> our mode.
_FLAGS = {
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len",
}
_UNSUPPORTED_FLAGS = (
    "pooling_mode_weightedmean_tokens",
    "pooling_mode_lasttoken",
)
# Pooling names of format 6 -> our mode.
_NAMES = {
    "mean": "mean",
    "cls": "cls",
    "max": "max",
    "mean_sqrt_len_tokens": "mean_sqrt_len",
}


def _json(path: str, what: str) -> Any:
  try:
    with open(path, encoding="utf-8") as f:
      return json.load(f)
  except FileNotFoundError:
    raise ConversionError(
        f"{path} not found: not a sentence-transformers model directory "
        f"({what}); give the directory SentenceTransformer.save wrote"
    ) from None
  except json.JSONDecodeError as e:
    raise ConversionError(f"{path}: not JSON ({e.msg})") from None


def _kind(module: Dict[str, Any]) -> str:
  return str(module.get("type", "")).rsplit(".", 1)[-1]


def _pooling_mode(path: str) -> str:
  config = _json(os.path.join(path, "config.json"), "its Pooling module")
  if "pooling_mode" in config:  # sentence-transformers 6
    name = config["pooling_mode"]
    if name not in _NAMES:
      raise ConversionError(
          f"{path}: pooling mode {name!r} is not one we carry "
          f"({', '.join(_NAMES)})"
      )
    return _NAMES[name]
  chosen = [mode for flag, mode in _FLAGS.items() if config.get(flag)]
  other = [flag for flag in _UNSUPPORTED_FLAGS if config.get(flag)]
  if other or len(chosen) != 1:
    raise ConversionError(
        f"{path}: pooling {sorted(chosen) + other} is not one mode of "
        f"{', '.join(MODES)}; only those convert"
    )
  return chosen[0]


def read_settings(checkpoint: str) -> Dict[str, Any]:
  """The Transformer's directory and the embedding settings of a
  sentence-transformers model directory.

  Returns:
    {"transformer": path, "pooling": mode, "normalize": bool,
    "max_seq_length": int or None, "do_lower_case": bool}.

  Raises:
    ConversionError: a file is missing, or a module cannot be carried.
  """
  modules = _json(os.path.join(checkpoint, MODULES_FILE), "modules.json")
  kinds = [_kind(m) for m in modules]
  for module, kind in zip(modules, kinds):
    if kind not in ("Transformer", "Pooling", "Normalize"):
      raise ConversionError(
          f"{checkpoint}: module {module.get('path') or module.get('name')} "
          f"({module.get('type')}) cannot be carried: only a Transformer, "
          "its Pooling and Normalize convert"
      )
  if kinds[:2] != ["Transformer", "Pooling"] or kinds[2:] not in (
      [],
      ["Normalize"],
  ):
    raise ConversionError(
        f"{checkpoint}: modules {kinds}; only Transformer, Pooling and an "
        "optional Normalize, in that order, convert"
    )
  transformer = os.path.join(checkpoint, modules[0].get("path") or "")
  if not os.path.isfile(os.path.join(transformer, SPM_FILE)):
    raise ConversionError(
        f"{transformer}: no {SPM_FILE}; the released ALBERT sentence models "
        "ship their SentencePiece model there beside tokenizer.json: copy it in"
    )
  st_config = {}
  path = os.path.join(transformer, ST_CONFIG_FILE)
  if os.path.isfile(path):
    st_config = _json(path, ST_CONFIG_FILE)
  tokenizer_config = {}
  path = os.path.join(transformer, "tokenizer_config.json")
  if os.path.isfile(path):
    tokenizer_config = _json(path, "tokenizer_config.json")
  length = st_config.get("max_seq_length")
  if length is None:
    length = tokenizer_config.get("model_max_length")
    if not isinstance(length, int) or length > 1 << 20:
      length = None  # transformers' "no limit"
  lower = bool(tokenizer_config.get("do_lower_case", True)) or bool(
      st_config.get("do_lower_case", False)
  )
  return {
      "transformer": transformer,
      "pooling": _pooling_mode(os.path.join(checkpoint, modules[1]["path"])),
      "normalize": kinds[2:] == ["Normalize"],
      "max_seq_length": length,
      "do_lower_case": lower,
  }


def from_sentence_transformers(*, checkpoint: str, output_dir: str) -> str:
  """A sentence-transformers model directory -> a model directory of ours
  with its embedding settings (embedding.json) and SentencePiece model."""
  model_io.check_output_dir(output_dir)
  settings = read_settings(checkpoint)
  transformer = settings.pop("transformer")
  record = {**settings, "source": "sentence_transformers"}
  written = huggingface.from_huggingface(
      checkpoint=transformer,
      output_dir=output_dir,
      extra_files={
          model_dir_lib.EMBEDDING_FILE: json.dumps(record, indent=2) + "\n"
      },
  )
  logging.info(
      "%s: %s pooling%s, max_seq_length %s",
      checkpoint,
      settings["pooling"],
      " and Normalize" if settings["normalize"] else "",
      settings["max_seq_length"],
  )
  return written


def to_sentence_transformers(*, checkpoint: str, output_dir: str) -> str:
  """A model directory of ours (its embedding.json, else mean pooling
  without normalisation) -> a sentence-transformers model directory."""
  model_io.check_output_dir(output_dir)
  model_dir, _ = model_dir_lib.split_checkpoint(checkpoint)
  settings = model_dir_lib.read_embedding(model_dir)
  if settings is None:
    logging.warning(
        "%s has no %s: written with mean pooling and no normalisation",
        model_dir,
        model_dir_lib.EMBEDDING_FILE,
    )
    settings = dict(model_dir_lib.EMBEDDING_DEFAULTS)
  spm, _ = model_dir_lib.tokenizer_files(model_dir)
  if spm is None:
    raise ConversionError(
        f"{model_dir}: no SentencePiece model (*.model) in it; "
        "sentence-transformers' ALBERT tokenizer needs one"
    )
  config = model_dir_lib.read_model_config(model_dir)
  length = settings["max_seq_length"] or config.max_position_embeddings
  with model_io.staged(output_dir) as staging:
    hf = os.path.join(staging, "hf")
    huggingface.to_huggingface(checkpoint=checkpoint, output_dir=hf)
    for name in os.listdir(hf):
      shutil.move(os.path.join(hf, name), os.path.join(staging, name))
    os.rmdir(hf)
    shutil.copy(spm, os.path.join(staging, SPM_FILE))
    lower = bool(settings["do_lower_case"])
    files = {
        # The whole pipeline in tokenizer.json, read as it is written
        # (transformers 5's AlbertTokenizer would rebuild its own).
        hf_tokenizer.FILE_NAME: hf_tokenizer.tokenizer_json(spm, lower),
        "tokenizer_config.json": {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "do_lower_case": lower,
            "model_max_length": length,
            **hf_tokenizer.SPECIAL_TOKENS,
        },
        ST_CONFIG_FILE: {"max_seq_length": length, "do_lower_case": False},
        os.path.join("1_Pooling", "config.json"): {
            "word_embedding_dimension": config.hidden_size,
            **{
                flag: settings["pooling"] == mode
                for flag, mode in _FLAGS.items()
            },
            "pooling_mode_weightedmean_tokens": False,
            "pooling_mode_lasttoken": False,
        },
        MODULES_FILE: _modules(settings["normalize"]),
    }
    for name, value in files.items():
      path = os.path.join(staging, name)
      os.makedirs(os.path.dirname(path), exist_ok=True)
      with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2)
    if settings["normalize"]:
      os.makedirs(os.path.join(staging, "2_Normalize"))
  return output_dir


def finetuned_to_sentence_transformers(task, model, output_dir: str) -> str:
  """A trained embedder (`gin/finetune/sentence_embedding.gin`'s model,
  restored by `finetuning.training.load_trained`) -> a directory
  `SentenceTransformer(path)` loads, with its pooling, normalisation,
  maximum length and tokenizer.

  Raises:
    ConversionError: the task's model is no embedder.
  """
  settings = task.embedding_settings()
  if settings is None:
    raise ConversionError(
        f"a fine-tuned {task.name} model is no embedding model: "
        "--to=sentence_transformers takes one trained with "
        "gin/finetune/sentence_embedding.gin, or a pretrained model directory"
    )
  if not task.spm_model_file:
    raise ConversionError(
        "sentence-transformers' ALBERT tokenizer needs a SentencePiece model; "
        "this embedder was trained with a WordPiece vocabulary"
    )
  model_io.check_output_dir(output_dir)
  # Our pretrained-model layout, the encoder's weights in it (the
  # pretraining heads, which an embedding model has none of, stay fresh).
  with tempfile.TemporaryDirectory() as ours:
    pretrainer = AlbertPretrainer.from_config_object(task.config)
    pretrainer.encoder.set_weights(model.encoder.get_weights())
    model_dir_lib.write_model_dir(ours, pretrainer)
    shutil.copy(task.spm_model_file, os.path.join(ours, SPM_FILE))
    with open(os.path.join(ours, model_dir_lib.EMBEDDING_FILE), "w") as f:
      json.dump(settings, f)
    return to_sentence_transformers(checkpoint=ours, output_dir=output_dir)


def _modules(normalize: bool):
  modules = [
      {
          "idx": 0,
          "name": "0",
          "path": "",
          "type": "sentence_transformers.models.Transformer",
      },
      {
          "idx": 1,
          "name": "1",
          "path": "1_Pooling",
          "type": "sentence_transformers.models.Pooling",
      },
  ]
  if normalize:
    modules.append(
        {
            "idx": 2,
            "name": "2",
            "path": "2_Normalize",
            "type": "sentence_transformers.models.Normalize",
        }
    )
  return modules
