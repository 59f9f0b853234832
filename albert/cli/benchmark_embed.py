r"""Sentence-embedding throughput against sentence-transformers and the
one-text-padded ONNX calls of pymilvus and GPTCache.

  python tools/benchmark_embed.py [--model=ST_DIR] [--num_texts=256] \
      [--batch_size=32] [--rounds=3] [--json]

--model is a sentence-transformers directory (`SentenceTransformer.save`,
e.g. paraphrase-albert-small-v2 as downloaded); without it, a randomly
initialised ALBERT of paraphrase-albert-small-v2's shape (6 layers, H=768,
E=128, mean pooling, 100 tokens) is written by our converter with a
SentencePiece model trained on the sample corpus. Our side is the same
weights converted with `--from=sentence_transformers`.

Texts of mixed length (1 to 12 docstring sentences of the standard library)
are embedded, tokenisation included, each contestant in a process of its
own, taking turns call by call (one call = every text):
  - ours: the serving SavedModel's `embed` signature, batches in order of
    length padded in the graph to their longest text (float32, and
    bfloat16 on CPUs with native bfloat16);
  - ours on onnxruntime: our ONNX export with its pooled `embedding`
    output, batched the same way (transformers' fast tokenizer);
  - one text per call padded to the maximum length, on the same ONNX model:
    how pymilvus' default embedder and GPTCache call theirs;
  - sentence-transformers' `encode` (PyTorch) at the same batch size:
    eager, under `torch.compile(dynamic=True)`, and with bfloat16 autocast
    where the CPU has it.
It prints texts/s, peak RSS, each contestant's agreement with the float32
`encode` (the least cosine over the first texts) and the paired ratios:
ours (the faster of our SavedModels) against the best of sentence-
transformers and against the one-text-padded path. Needs
sentence-transformers, torch, onnx and onnxruntime (the development set).
"""

import json

from absl import flags

from albert import cli
from albert.benchmarks import embedding

MODEL = flags.DEFINE_string(
    "model", None, "A sentence-transformers directory (default: random)."
)
WORK_DIR = flags.DEFINE_string(
    "work_dir", None, "Where the model, exports and texts go (default: tmp)."
)
NUM_TEXTS = flags.DEFINE_integer("num_texts", 256, "Texts per timed call.")
BATCH = flags.DEFINE_integer("batch_size", 32, "Texts per batch.")
ROUNDS = flags.DEFINE_integer("rounds", 3, "Timed calls per contestant.")
COMPILE = flags.DEFINE_bool(
    "torch_compile", True, "Also time sentence-transformers compiled."
)
JSON = flags.DEFINE_bool("json", False, "Print one JSON object.")


def main(argv):
  cli.unexpected_arguments(argv)
  report = embedding.measure(
      embedding.EmbedBenchmark(
          model=MODEL.value,
          work_dir=WORK_DIR.value,
          num_texts=NUM_TEXTS.value,
          batch_size=BATCH.value,
          rounds=ROUNDS.value,
          torch_compile=COMPILE.value,
      )
  )
  if JSON.value:
    print(json.dumps(report, indent=2))
    return
  print(f"CPU: {report['cpu']}")
  print(
      f"{report['texts']} texts, batch {report['batch_size']}, at most "
      f"{report['max_length']} tokens, median of {report['rounds']} rounds"
  )
  for name, row in report.items():
    if isinstance(row, dict):
      rss = row["peak_rss_mb"]
      print(
          f"  {name:30s} {row['texts_per_second']:8.1f} texts/s  "
          f"peak RSS {rss:7.0f} MB  "
          f"cosine to encode >= {row['min_cosine_to_st_float32']:.5f}"
      )
  print(
      f"{report['ours_best']} vs {report['st_best']}: "
      f"{report['ours_vs_st_best']:.2f}x (target >= 1.2)"
  )
  print(
      f"{report['ours_best']} vs onnx_one_text_padded: "
      f"{report['ours_vs_one_text_padded']:.2f}x (target >= 3)"
  )
  print(
      f"ours_onnx_batched vs {report['st_best']}: "
      f"{report['ours_onnx_vs_st_best']:.2f}x"
  )


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
