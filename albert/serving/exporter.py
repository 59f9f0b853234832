"""Writes the encoder, preprocessing and serving SavedModels of a model.

`python -m albert.run_export` is the command-line front of this module.
"""

import os
from typing import Any, Dict, Optional, Sequence

from absl import logging
import tensorflow as tf
import tensorflow_text  # noqa: F401 (registers the ops)

from albert import configs
from albert.modeling.config import AlbertConfig
from albert.serving.hub_encoder_module import HubEncoderModule
from albert.serving.hub_preprocessing_module import HubPreprocessingModule
from albert.serving.wordpiece_preprocessor import make_preprocessor
from albert.text import tokenizers
from albert.modeling.pretrainer import AlbertPretrainer
from albert.serving.text_serving_module import TextServingModule
from official.io import atomic_write
from official.io import files


def config_from_gin(
    gin_file: Sequence[str] = (), gin_param: Sequence[str] = ()
) -> AlbertConfig:
  """The model config from gin files and bindings (not model_config.json)."""
  configs.parse(gin_file, gin_param)
  return AlbertConfig()


def export(
    pretrainer: AlbertPretrainer,
    *,
    spm_model_file: Optional[str] = None,
    vocab_file: Optional[str] = None,
    export_dir: str,
    seq_length: int = 128,
    do_lower_case: bool = True,
    top_k: int = 5,
    embedding: Optional[Dict[str, Any]] = None,
    dynamic_length: bool = True,
    xla: bool = False,
) -> None:
  r"""Writes the three SavedModels into `export_dir` (atomically); text is
  tokenized with the SentencePiece model, else with the WordPiece vocab.txt
  (as the original chooses). `embedding` (a model directory's
  embedding.json, `model_dir.read_embedding`) sets the serving model's
  `embed` and `similarity` signatures' pooling, normalisation and maximum
  length (default: mean pooling, no normalisation, the position table).
  The serving model pads each batch to its longest text, up to
  `seq_length`; `dynamic_length=False` pads every batch to `seq_length`.
  `xla` compiles the fixed-length encoder with XLA, or runs the fusions
  between the dynamic-length encoder's matrix products as XLA's
  (`TextServingModule`); the SavedModel then needs XLA's CPU JIT where it
  is served.

  Example (a tiny untrained model and a WordPiece vocab.txt; `python -m
  albert.run_export` exports a model directory's checkpoint the same way):

  >>> import os, tempfile
  >>> import tensorflow as tf
  >>> from albert.modeling.config import AlbertConfig
  >>> from albert.modeling.pretrainer import AlbertPretrainer
  >>> from albert.serving import exporter
  >>> work = tempfile.mkdtemp()
  >>> vocab = os.path.join(work, "vocab.txt")
  >>> with open(vocab, "w") as f:
  ...   _ = f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
  ...                          "it", "opens", "the", "file", "."]))
  >>> config = AlbertConfig(vocab_size=10, embedding_size=8, hidden_size=16,
  ...                       num_layers=2, num_heads=2, intermediate_size=32)
  >>> export_dir = os.path.join(work, "export")
  >>> exporter.export(AlbertPretrainer.from_config_object(config),
  ...                 vocab_file=vocab, export_dir=export_dir, seq_length=12)
  >>> sorted(os.listdir(export_dir))
  ['encoder', 'preprocessing', 'serving']
  >>> serving = tf.saved_model.load(os.path.join(export_dir, "serving"))
  >>> outputs = serving.signatures["serving_default"](
  ...     text=tf.constant(["It opens the file."]))
  >>> outputs["pooled_output"].shape, outputs["sequence_output"].shape
  (TensorShape([1, 16]), TensorShape([1, 7, 16]))
  >>> outputs["input_mask"].numpy()  # [CLS] it opens the file . [SEP]
  array([[1, 1, 1, 1, 1, 1, 1]], dtype=int32)
  >>> outputs = serving.signatures["serving_default"](
  ...     text=tf.constant(["It opens the file.", "The file."]))
  >>> outputs["input_mask"].numpy()  # padded to the batch's longest text
  array([[1, 1, 1, 1, 1, 1, 1],
         [1, 1, 1, 1, 1, 0, 0]], dtype=int32)
  """
  if files.exists(export_dir):
    raise ValueError(
        f"export_dir {export_dir} exists: choose a new one or remove it"
    )
  kind = tokenizers.choose(spm_model_file, vocab_file)
  path = spm_model_file if kind == tokenizers.SENTENCEPIECE else vocab_file
  what = "SentencePiece model" if path == spm_model_file else "vocabulary"
  if not files.isfile(path):
    raise ValueError(f"{what} {path} not found")
  if seq_length > pretrainer.encoder.config.max_position_embeddings:
    raise ValueError(
        f"seq_length={seq_length} exceeds max_position_embeddings"
        f"={pretrainer.encoder.config.max_position_embeddings}"
    )
  preprocessor, hub_preprocessor = (
      make_preprocessor(
          spm_model_file=spm_model_file,
          vocab_file=vocab_file,
          seq_length=seq_length,
          do_lower_case=do_lower_case,
          dynamic_length=dynamic,
      )
      # The TF Hub preprocessing keeps that contract's fixed seq_length.
      for dynamic in (dynamic_length, False)
  )
  vocab = preprocessor.vocab_size
  if vocab != pretrainer.encoder.config.vocab_size:
    raise ValueError(
        f"{what} {path} has {vocab} entries but the model's "
        f"vocab_size is {pretrainer.encoder.config.vocab_size}"
    )
  with atomic_write.atomic_directory(export_dir) as tmp:
    modules = {
        "encoder": HubEncoderModule(pretrainer, path, do_lower_case),
        "preprocessing": HubPreprocessingModule(hub_preprocessor),
        "serving": TextServingModule(
            pretrainer,
            preprocessor,
            top_k=top_k,
            embedding=embedding,
            xla=xla,
        ),
    }
    for name, module in modules.items():
      tf.saved_model.save(
          module, os.path.join(tmp, name), signatures=module.signatures()
      )
      logging.info("Wrote the %s SavedModel", name)
