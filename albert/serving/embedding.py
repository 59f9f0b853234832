"""`Embedder`: texts -> one vector each, as the model directory's embedding
settings (embedding.json: pooling, normalisation, maximum length,
lower-casing) say; sentence-transformers' `encode` of the same model gives
the same vectors.

Texts are packed as `[CLS] pieces [SEP]`, cut to the maximum length (never
an error), batched in order of length and padded to the longest text of
each batch, not to a fixed length. An empty text gets the vector of its two
special tokens; an empty list gives an empty [0, H] array.
"""

import json
import os
from typing import List, Optional, Sequence

from absl import logging
import numpy as np
import tensorflow as tf

from albert import model_dir as model_dir_lib
from albert.modeling.pooling import SentencePooling
from albert.text import tokenizers
from official.core.progress import Progress
from official.errors import InputError
from official.io import atomic_write
from official.io import files
from official.io import table_rows
from official.modeling import fusion


def in_length_order(items, vectors, batch_size: int, dim: int) -> np.ndarray:
  """[len(items), dim] float32, in the order of `items`: `vectors(batch)`
  of batches of `batch_size` items taken shortest first, so that each batch
  pads to a length near its own."""
  out = np.zeros((len(items), dim), np.float32)
  order = sorted(range(len(items)), key=lambda i: len(items[i]))
  for start in range(0, len(order), batch_size):
    chosen = order[start : start + batch_size]
    out[chosen] = np.asarray(vectors([items[i] for i in chosen]))
  return out


class Embedder:
  """Embeds texts with an encoder and its tokenizer.

  Args:
    encoder: an `AlbertEncoder`.
    tokenizer: its tokenizer (`albert.text.tokenizers`).
    pooling, normalize: `SentencePooling`'s mode and normalisation.
    max_seq_length: tokens per text, [CLS] and [SEP] included (None: the
      encoder's position table).
  """

  def __init__(
      self,
      encoder,
      tokenizer,
      *,
      pooling: str = "mean",
      normalize: bool = False,
      max_seq_length: Optional[int] = None,
  ):
    self.encoder = encoder
    self.tokenizer = tokenizer
    self.pool = SentencePooling(mode=pooling, normalize=normalize)
    limit = encoder.config.max_position_embeddings
    self.max_seq_length = min(max_seq_length or limit, limit)
    self.dim = encoder.config.hidden_size
    self._call = tf.function(
        self._vectors, reduce_retracing=True, autograph=False
    )

  @classmethod
  def from_model_dir(
      cls, model_dir: str, checkpoint: Optional[str] = None
  ) -> "Embedder":
    """The embedder a model directory describes: its encoder, tokenizer
    file and embedding.json (defaults: mean pooling, no normalisation)."""
    pretrainer, _ = model_dir_lib.load_pretrainer(model_dir, checkpoint)
    settings = model_dir_lib.read_embedding(model_dir) or dict(
        model_dir_lib.EMBEDDING_DEFAULTS
    )
    spm, vocab = model_dir_lib.tokenizer_files(model_dir)
    tokenizer = tokenizers.load(spm, vocab, lower=settings["do_lower_case"])
    return cls(
        pretrainer.encoder,
        tokenizer,
        pooling=settings["pooling"],
        normalize=settings["normalize"],
        max_seq_length=settings["max_seq_length"],
    )

  def token_ids(self, text: str) -> List[int]:
    """[CLS] pieces [SEP], cut to `max_seq_length`."""
    pieces = self.tokenizer.tokenize(text)[: self.max_seq_length - 2]
    return [self.tokenizer.cls_id] + pieces + [self.tokenizer.sep_id]

  def _vectors(self, ids, mask):
    with fusion.scope(True):  # as the SavedModel's `embed` computes
      outputs = self.encoder(
          {
              "input_word_ids": ids,
              "input_mask": mask,
              "input_type_ids": tf.zeros_like(ids),
          },
          training=False,
      )
    return self.pool(outputs["sequence_output"], mask)

  def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
    """[len(texts), H] float32, in the order of `texts`."""

    def vectors(rows: List[List[int]]) -> np.ndarray:
      lengths = np.array([len(r) for r in rows])
      mask = np.arange(lengths.max())[None, :] < lengths[:, None]
      batch = np.zeros(mask.shape, np.int32)
      batch[mask] = np.concatenate(rows)
      return self._call(tf.constant(batch), tf.constant(mask.astype(np.int32)))

    ids = [self.token_ids(t) for t in texts]
    return in_length_order(ids, vectors, batch_size, self.dim)


class SavedModelEmbedder:
  """Embeds texts with an exported serving SavedModel's `embed` signature
  (`run_export`'s EXPORT_DIR/serving, or EXPORT_DIR itself)."""

  def __init__(self, path: str):
    self._embed = tf.saved_model.load(path).signatures["embed"]
    self.dim = int(self._embed.structured_outputs["embedding"].shape[-1])

  def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
    def vectors(batch: List[str]):
      return self._embed(text=tf.constant(batch, tf.string))["embedding"]

    return in_length_order(list(texts), vectors, batch_size, self.dim)


def open_embedder(path: str, checkpoint: Optional[str] = None):
  """An `Embedder` of a model directory, or a `SavedModelEmbedder` of an
  export (a directory with saved_model.pb, or one whose serving/ has it)."""
  for candidate in (path, os.path.join(path, "serving")):
    if files.exists(os.path.join(candidate, "saved_model.pb")):
      return SavedModelEmbedder(candidate)
  return Embedder.from_model_dir(path, checkpoint)


def read_texts(path: str, column: str = "text") -> List[str]:
  """The texts of a file: one per line, or `column` of a CSV / TSV (header
  row) or JSON Lines file (by its extension; `official.io.table_rows`)."""
  if not path.endswith(table_rows.EXTENSIONS):
    return files.read_text(path, "the texts file").splitlines()
  rows = table_rows.rows_of(path)
  keys = set().union(*(row for _, row in rows))
  if rows and column not in keys:
    raise InputError(
        f"{path}: no column {column!r} (it has {', '.join(sorted(keys))}); "
        "name the texts' column with --column"
    )
  texts = []
  for number, row in rows:
    value = row.get(column)
    if value is None and not path.endswith((".csv", ".tsv")):
      raise InputError(
          f"{path} line {number}: no field {column!r}; name it with --column"
      )
    texts.append("" if value is None else str(value))
  return texts


def embed_file(
    embedder,
    input_path: str,
    output_path: str,
    *,
    column: str = "text",
    batch_size: int = 32,
    chunk: int = 1024,
) -> int:
  """Embeds every text of `input_path` into `output_path` (.npy: [N, H]
  float32; .jsonl: {"text", "embedding"} per line), written under a
  temporary name and renamed when complete; logs counts, rate and ETA.
  Returns the number of texts."""
  if not output_path.endswith((".npy", ".jsonl")):
    raise InputError(f"--output={output_path}: name a .npy or .jsonl file")
  texts = read_texts(input_path, column)
  progress = Progress(len(texts))
  parts = []
  for start in range(0, len(texts), chunk):
    parts.append(embedder.embed(texts[start : start + chunk], batch_size))
    progress.update(start + len(parts[-1]))
    logging.info("Embedded %s", progress.describe("texts"))
  vectors = (
      np.concatenate(parts)
      if parts
      else np.zeros((0, embedder.dim), np.float32)
  )
  if output_path.endswith(".npy"):
    with atomic_write.atomic_file(output_path, "wb") as f:
      np.save(f, vectors)
  else:
    with atomic_write.atomic_file(output_path, "w", encoding="utf-8") as f:
      for text, vector in zip(texts, vectors):
        f.write(json.dumps({"text": text, "embedding": vector.tolist()}) + "\n")
  return len(texts)
