"""Sentence-embedding throughput: our SavedModel and ONNX export against
sentence-transformers' `encode` and the one-text-padded ONNX calls of
pymilvus and GPTCache, on the same weights and texts: the measuring behind
`tools/benchmark_embed.py` (its --help says what is measured).
"""

import dataclasses
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
from typing import Dict, List, Optional

import numpy as np
import tensorflow as tf
import tf_keras

from albert import model_dir as model_dir_lib
from albert.benchmarks.workers import embed_onnx
from albert.benchmarks.workers import embed_saved_model
from albert.benchmarks.workers import embed_sentence_transformers
from albert.checkpoint_conversion import sentence_transformers as st_format
from albert.modeling.config import AlbertConfig
from albert.modeling.pretrainer import AlbertPretrainer
from albert.pretraining_data import sample_corpus
from albert.pretraining_data.sentencepiece_trainer import train_sentencepiece
from albert.serving import onnx_export
from albert.serving.embedding_serving import EmbeddingServingModule
from albert.serving.wordpiece_preprocessor import make_preprocessor
from official.benchmark import cpu_info
from official.benchmark import turns

# paraphrase-albert-small-v2's shape (sentence-transformers' ALBERT: 6
# layers of albert-base-v2's width, mean pooling, 100 tokens at most).
SMALL_V2 = dict(
    embedding_size=128,
    hidden_size=768,
    num_layers=6,
    num_heads=12,
    intermediate_size=3072,
    max_position_embeddings=512,
)
SMALL_V2_MAX_LENGTH = 100


@dataclasses.dataclass(frozen=True)
class EmbedBenchmark:
  """What to measure (the command's flags of the same names)."""

  model: Optional[str] = None  # a sentence-transformers directory
  work_dir: Optional[str] = None
  num_texts: int = 256
  batch_size: int = 32
  rounds: int = 3
  vocab_size: int = 8000  # of the random model's SentencePiece model
  torch_compile: bool = True
  bf16: Optional[bool] = None  # bfloat16 contestants; None: where native
  seed: int = 0


# Packages of the standard library whose docstrings give the texts.
TEXT_PACKAGES = ("asyncio", "email", "logging", "unittest", "json", "http")


def sample_texts(count: int, seed: int = 0) -> List[str]:
  """`count` texts of mixed length (1 to 12 sentences of the docstrings of
  TEXT_PACKAGES: a few tokens to several hundred)."""
  sentences = [
      s
      for _, document in sample_corpus.package_documents(TEXT_PACKAGES)
      for s in document
  ]
  rng = random.Random(seed)
  texts = []
  for _ in range(count):
    n = min(12, int(rng.expovariate(1 / 2.5)) + 1)
    start = rng.randrange(len(sentences) - n)
    texts.append(" ".join(sentences[start : start + n]))
  return texts


def random_model(work: str, vocab_size: int) -> str:
  """A sentence-transformers directory of a randomly initialised ALBERT of
  paraphrase-albert-small-v2's shape, written by our converter
  (`--to=sentence_transformers`) with a SentencePiece model trained on the
  sample corpus; returns its path."""
  corpus = os.path.join(work, "corpus.txt")
  sample_corpus.write_sample_corpus(corpus)
  prefix = os.path.join(work, "spm")
  train_sentencepiece(
      input_file=corpus,
      model_prefix=prefix,
      vocab_size=vocab_size,
      hard_vocab_limit=False,
  )
  sp_vocab = sum(1 for _ in open(prefix + ".vocab", encoding="utf-8"))
  config = AlbertConfig(vocab_size=sp_vocab, **SMALL_V2)
  tf_keras.utils.set_random_seed(0)
  ours = os.path.join(work, "random_model")
  model_dir_lib.write_model_dir(
      ours, AlbertPretrainer.from_config_object(config)
  )
  shutil.copy(prefix + ".model", os.path.join(ours, "spm.model"))
  settings = {
      "pooling": "mean",
      "normalize": False,
      "max_seq_length": SMALL_V2_MAX_LENGTH,
      "do_lower_case": True,
  }
  with open(os.path.join(ours, model_dir_lib.EMBEDDING_FILE), "w") as f:
    json.dump(settings, f)
  out = os.path.join(work, "sentence_transformers")
  st_format.to_sentence_transformers(checkpoint=ours, output_dir=out)
  return out


def _exports(st_dir: str, work: str, bf16: bool) -> Dict[str, str]:
  """Our model directory of `st_dir` and its exports: {name: path}."""
  ours = os.path.join(work, "ours")
  if not os.path.exists(ours):
    st_format.from_sentence_transformers(checkpoint=st_dir, output_dir=ours)
  settings = model_dir_lib.read_embedding(ours)
  spm, _ = model_dir_lib.tokenizer_files(ours)
  paths = {}
  for precision in ("float32", "bfloat16") if bf16 else ("float32",):
    pretrainer, config = model_dir_lib.load_pretrainer(
        ours, precision=precision
    )
    length = settings["max_seq_length"] or config.max_position_embeddings
    preprocessor = make_preprocessor(
        spm_model_file=spm,
        vocab_file=None,
        seq_length=length,
        do_lower_case=settings["do_lower_case"],
    )
    # Ours at its best: the fusions XLA compiles (run_export --xla).
    module = EmbeddingServingModule(
        pretrainer, preprocessor, settings, fused_kernels=True
    )
    path = os.path.join(work, f"saved_model_{precision}")
    tf.saved_model.save(module, path, signatures=module.signatures())
    paths[f"saved_model_{precision}"] = path
    if precision == "float32":
      paths["onnx"] = onnx_export.write(
          pretrainer.encoder, os.path.join(work, "model.onnx"), settings
      )
      paths["max_length"] = str(length)
  return paths


def _worker(name, module, args) -> turns.Worker:
  return turns.Worker(
      name, [sys.executable, "-m", module.__name__] + [str(a) for a in args]
  )


def _cosines(a, b) -> float:
  a = np.asarray(a, np.float64)
  b = np.asarray(b, np.float64)
  a /= np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), 1e-12)
  b /= np.maximum(np.linalg.norm(b, axis=-1, keepdims=True), 1e-12)
  return float(np.min(np.sum(a * b, axis=-1)))


def measure(b: EmbedBenchmark, log=print) -> Dict:
  """Prepares the model, its exports and the texts, times every contestant
  in turns; the report (texts/s, peak RSS, agreement, paired ratios)."""
  work = b.work_dir or tempfile.mkdtemp(prefix="benchmark_embed_")
  os.makedirs(work, exist_ok=True)
  cpu = cpu_info.read()
  bf16 = cpu.bf16 if b.bf16 is None else b.bf16
  st_dir = b.model or random_model(work, b.vocab_size)
  log(f"model: {st_dir}; exporting ours")
  paths = _exports(st_dir, work, bf16)
  texts_file = os.path.join(work, "texts.json")
  texts = sample_texts(b.num_texts, b.seed)
  with open(texts_file, "w", encoding="utf-8") as f:
    json.dump(texts, f)
  max_length = int(paths["max_length"])
  specs = [
      (
          "ours_saved_model_float32",
          embed_saved_model,
          [paths["saved_model_float32"], texts_file, b.batch_size],
      )
  ]
  if bf16:
    specs.append(
        (
            "ours_saved_model_bfloat16",
            embed_saved_model,
            [paths["saved_model_bfloat16"], texts_file, b.batch_size],
        )
    )
  specs += [
      (
          "ours_onnx_batched",
          embed_onnx,
          [
              paths["onnx"],
              st_dir,
              texts_file,
              b.batch_size,
              max_length,
              "batched",
          ],
      ),
      (
          "onnx_one_text_padded",
          embed_onnx,
          [paths["onnx"], st_dir, texts_file, 1, max_length, "one_padded"],
      ),
      (
          "st_encode_float32",
          embed_sentence_transformers,
          [st_dir, texts_file, b.batch_size, 0, "none"],
      ),
  ]
  if b.torch_compile:
    specs.append(
        (
            "st_encode_float32_compiled",
            embed_sentence_transformers,
            [st_dir, texts_file, b.batch_size, 1, "none"],
        )
    )
  if bf16:
    specs.append(
        (
            "st_encode_bfloat16_compiled"
            if b.torch_compile
            else "st_encode_bfloat16",
            embed_sentence_transformers,
            [
                st_dir,
                texts_file,
                b.batch_size,
                int(b.torch_compile),
                "bfloat16",
            ],
        )
    )
  workers = []
  try:
    for name, module, args in specs:
      log(f"starting {name} (warm-up: two calls)")
      workers.append(_worker(name, module, args))
    log(f"timing {len(workers)} contestants, {b.rounds} rounds")
    times = turns.take_turns(workers, b.rounds)
    finals = {w.name: w.close() for w in workers}
  finally:
    for w in workers:
      w.kill()
  reference = np.asarray(
      workers[[w.name for w in workers].index("st_encode_float32")].info[
          "pooled"
      ]
  )
  report = {
      "cpu": cpu.describe(),
      "model": st_dir,
      "texts": b.num_texts,
      "batch_size": b.batch_size,
      "max_length": max_length,
      "rounds": b.rounds,
  }
  for w in workers:
    seconds = statistics.median(times[w.name])
    report[w.name] = {
        "texts_per_second": b.num_texts / seconds,
        "median_seconds": seconds,
        "peak_rss_mb": finals[w.name].get("peak_rss_mb"),
        "min_cosine_to_st_float32": _cosines(w.info["pooled"], reference),
        **{k: v for k, v in w.info.items() if k != "pooled"},
    }
  ours = min(
      (n for n in times if n.startswith("ours_saved_model")),
      key=lambda n: statistics.median(times[n]),
  )
  peer = min(
      (n for n in times if n.startswith("st_encode")),
      key=lambda n: statistics.median(times[n]),
  )
  report["ours_best"], report["st_best"] = ours, peer
  report["ours_vs_st_best"] = turns.paired_ratio(times, peer, ours)
  report["ours_vs_one_text_padded"] = turns.paired_ratio(
      times, "onnx_one_text_padded", ours
  )
  report["ours_onnx_vs_st_best"] = turns.paired_ratio(
      times, peer, "ours_onnx_batched"
  )
  return report
