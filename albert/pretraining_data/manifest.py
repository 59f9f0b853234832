"""`build_manifest`: what a generated dataset holds and how it was made.

The manifest records only what decides the bytes (no times, no process
counts), so equal runs give equal manifests.
"""

from typing import Any, Dict, List, Sequence, Tuple

from albert import features
from albert.pretraining_data import documents_format
from albert.pretraining_data.data_config import PretrainingDataConfig

FORMAT = "albert_pretraining_tfrecord"
VERSION = 2  # 2: "tokenizer" (SentencePiece or WordPiece)


def feature_schema(config: PretrainingDataConfig) -> List[Dict[str, Any]]:
  lengths = features.feature_lengths(
      config.max_seq_length, config.max_predictions_per_seq
  )
  return [
      {
          "name": f.record_name,
          "dtype": f.dtype,
          "length": lengths[f.record_name],
      }
      for f in features.PRETRAINING_FEATURES
  ]


def build_manifest(
    *,
    config: PretrainingDataConfig,
    inputs: Sequence[Tuple[str, int]],
    tokenizer: Dict[str, Any],
    compression: str,
    totals: Dict[str, int],
    shards: Sequence[Dict[str, Any]],
    mixing: Dict[str, Any],
    vocabulary: Dict[str, Any] = None,
    random_documents: str = None,
) -> Dict[str, Any]:
  """The manifest as a JSON-ready dict.

  Args:
    config: the generation options (recorded under "flags").
    inputs: (path, bytes) of every input file.
    tokenizer: `TokenizerFile.describe`: kind ("sentencepiece" or
      "wordpiece"), path, sha256, vocab_size. SentencePiece data also keep
      it as "spm_model" (path, sha256, vocab_size), as version 1 did.
    compression: "" or "GZIP" (the tf.data compression_type to read with).
    totals: summed `BlockStats` counts.
    shards: per shard {"file", "num_examples" (or "num_documents"),
      "num_tokens", "bytes"} ("bytes": the file size readers check).
    mixing: global_shuffle.mixing_summary of the shards.
    vocabulary: `documents_format.vocabulary_entry` (the documents format,
      whose reader pairs and masks without the tokenizer).
    random_documents: the documents format: the pool file's name beside
      the manifest, None if the corpus has fewer than 2 documents.
  """
  if config.output_format == "documents":
    return _documents_manifest(
        config=config,
        inputs=inputs,
        tokenizer=tokenizer,
        compression=compression,
        totals=totals,
        shards=shards,
        mixing=mixing,
        vocabulary=vocabulary,
        random_documents=random_documents,
    )
  examples = totals.get("examples", 0)
  manifest = {
      "format": FORMAT,
      "version": VERSION,
      "num_examples": examples,
      "num_tokens": totals.get("example_tokens", 0),
      "num_masked_positions": totals.get("masked_positions", 0),
      "num_documents": totals.get("documents", 0),
      "num_input_tokens": totals.get("input_tokens", 0),
      "sentence_label_1_fraction": (
          totals.get("sentence_label_1", 0) / examples if examples else 0.0
      ),
      "compression": compression,
      "flags": config.to_dict(),
      "tokenizer": dict(tokenizer),
      "inputs": [{"path": p, "bytes": b} for p, b in inputs],
      "features": feature_schema(config),
      "shards": list(shards),
      "mixing": dict(mixing),
  }
  if tokenizer["kind"] == "sentencepiece":
    manifest["spm_model"] = {
        k: tokenizer[k] for k in ("path", "sha256", "vocab_size")
    }
  return manifest


def _documents_manifest(
    *,
    config,
    inputs,
    tokenizer,
    compression,
    totals,
    shards,
    mixing,
    vocabulary,
    random_documents,
) -> Dict[str, Any]:
  """The documents format's manifest: what was written and what its reader
  needs (the vocabulary's tables; the pairing and masking options under
  "flags" are the reader's defaults)."""
  manifest = {
      "format": documents_format.FORMAT,
      "version": 1,
      "num_documents": totals.get("examples", 0),
      "num_tokens": totals.get("example_tokens", 0),
      "num_short_documents": totals.get("short_documents", 0),
      "num_input_documents": totals.get("documents", 0),
      "num_segments": totals.get("segments", 0),
      "compression": compression,
      "flags": config.to_dict(),
      "tokenizer": dict(tokenizer),
      "vocabulary": dict(vocabulary),
      "random_documents": random_documents,
      "inputs": [{"path": p, "bytes": b} for p, b in inputs],
      "features": documents_format.feature_schema(),
      "shards": list(shards),
      "mixing": dict(mixing),
  }
  return manifest
