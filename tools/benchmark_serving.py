r"""Serving latency and throughput of an exported ALBERT, tokenisation included.

  python tools/benchmark_serving.py --gin_file=gin/base.gin \
      --spm_model_file=demo_out/spm.model [--seq_length=128] [--json]

Exports a randomly initialised model of the given size (vocab_size taken from
the SentencePiece model) as the serving SavedModel, loads it in a fresh process
that imports only TensorFlow and TF-Text, and times `serving_default` on raw
text that fills `seq_length` tokens: the median latency at batch 1 and the
throughput at batch 32. In the same run, when `torch` and `transformers` are
importable, it times Hugging Face's PyTorch `AlbertModel` forward pass at the
same shapes on token ids (no tokenisation) as the baseline.
"""

import json
import os
import subprocess
import sys
import tempfile

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags

GIN_FILES = flags.DEFINE_multi_string("gin_file", ["gin/base.gin"], "Model size.")
SPM = flags.DEFINE_string("spm_model_file", None, "SentencePiece model.")
SEQ = flags.DEFINE_integer("seq_length", 128, "Tokens per example.")
BATCH = flags.DEFINE_integer("batch_size", 32, "Batch of the throughput run.")
REPEATS = flags.DEFINE_integer("repeats", 20, "Timed calls at batch 1.")
JSON = flags.DEFINE_bool("json", False, "Print one JSON object.")
TORCH = flags.DEFINE_bool("torch", True, "Measure the PyTorch baseline if present.")

_TIME_SAVED_MODEL = r"""
import json, statistics, sys, time
import tensorflow as tf
import tensorflow_text
path, seq, batch, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
serve = tf.saved_model.load(path).signatures["serving_default"]
text = " ".join(["the quick brown fox jumps over the lazy dog"] * (seq // 4))
one, many = tf.constant([text]), tf.constant([text] * batch)
tokens = int(serve(text=one)["input_mask"].numpy().sum())
for _ in range(3):
  serve(text=one)
times = []
for _ in range(repeats):
  start = time.perf_counter(); serve(text=one)["pooled_output"].numpy()
  times.append(time.perf_counter() - start)
serve(text=many)
start = time.perf_counter()
for _ in range(3):
  serve(text=many)["pooled_output"].numpy()
per_batch = (time.perf_counter() - start) / 3
print(json.dumps({"latency_ms": 1000 * statistics.median(times), "tokens": tokens,
                  "throughput_per_s": batch / per_batch}))
"""

_TIME_TORCH = r"""
import json, statistics, sys, time
import torch, transformers
vocab, hidden, layers, heads, ffn, seq, batch, repeats = map(int, sys.argv[1:9])
config = transformers.AlbertConfig(
    vocab_size=vocab, embedding_size=128, hidden_size=hidden,
    num_hidden_layers=layers, num_attention_heads=heads,
    intermediate_size=ffn, hidden_act="gelu_new", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0)
model = transformers.AlbertModel(config).eval()
one = torch.randint(5, vocab, (1, seq))
many = torch.randint(5, vocab, (batch, seq))
with torch.no_grad():
  for _ in range(3):
    model(input_ids=one)
  times = []
  for _ in range(repeats):
    start = time.perf_counter(); model(input_ids=one)
    times.append(time.perf_counter() - start)
  model(input_ids=many)
  start = time.perf_counter()
  for _ in range(3):
    model(input_ids=many)
  per_batch = (time.perf_counter() - start) / 3
print(json.dumps({"latency_ms": 1000 * statistics.median(times),
                  "throughput_per_s": batch / per_batch}))
"""


def _json_of(args):
  run = subprocess.run(args, capture_output=True, text=True)
  if run.returncode != 0:
    sys.exit("benchmark_serving: "
             f"{(run.stderr.strip().splitlines() or ['failed'])[-1]}")
  return json.loads(run.stdout.strip().splitlines()[-1])


def main(argv):
  del argv
  if not SPM.value:
    sys.exit("benchmark_serving: --spm_model_file is required")
  import sentencepiece as spm  # pylint: disable=g-import-not-at-top
  from albert.config import AlbertConfig  # pylint: disable=g-import-not-at-top
  from albert.encoder import AlbertEncoder  # pylint: disable=g-import-not-at-top
  from albert.exporter import export  # pylint: disable=g-import-not-at-top
  from albert.pretrainer import AlbertPretrainer  # pylint: disable=g-import-not-at-top
  from official.config import gin_files  # pylint: disable=g-import-not-at-top
  try:
    gin_files.parse_gin(GIN_FILES.value, search_paths=[REPO_ROOT])
    vocab = spm.SentencePieceProcessor(model_file=SPM.value).get_piece_size()
    config = AlbertConfig().replace(vocab_size=vocab)
  except (OSError, RuntimeError, ValueError) as e:
    sys.exit(f"benchmark_serving: {str(e).strip().splitlines()[0]}")
  pretrainer = AlbertPretrainer(AlbertEncoder.from_config_object(config))
  with tempfile.TemporaryDirectory() as tmp:
    export_dir = os.path.join(tmp, "export")
    print("benchmark_serving: exporting ...", file=sys.stderr, flush=True)
    export(pretrainer, spm_model_file=SPM.value, export_dir=export_dir,
           seq_length=SEQ.value)
    print("benchmark_serving: timing the SavedModel ...", file=sys.stderr,
          flush=True)
    ours = _json_of([sys.executable, "-c", _TIME_SAVED_MODEL,
                     os.path.join(export_dir, "serving"), str(SEQ.value),
                     str(BATCH.value), str(REPEATS.value)])
  report = {"seq_length": SEQ.value, "batch_size": BATCH.value,
            "saved_model": ours}
  have_torch = TORCH.value and subprocess.run(
      [sys.executable, "-c", "import torch, transformers"],
      capture_output=True).returncode == 0
  if have_torch:
    print("benchmark_serving: timing transformers' AlbertModel ...",
          file=sys.stderr, flush=True)
    report["torch"] = _json_of([sys.executable, "-c", _TIME_TORCH] + [str(v) for v in (
        config.vocab_size, config.hidden_size, config.num_layers,
        config.num_heads, config.intermediate_size, SEQ.value, BATCH.value,
        REPEATS.value)])
    report["latency_vs_torch"] = ours["latency_ms"] / report["torch"]["latency_ms"]
    report["throughput_vs_torch"] = (ours["throughput_per_s"] /
                                     report["torch"]["throughput_per_s"])
  if JSON.value:
    print(json.dumps(report, sort_keys=True))
    return
  print(f"serving SavedModel (raw text, tokenisation included), seq {SEQ.value}: "
        f"batch 1 latency {ours['latency_ms']:.1f} ms (median of {REPEATS.value}), "
        f"batch {BATCH.value} throughput {ours['throughput_per_s']:.1f} examples/s")
  if have_torch:
    t = report["torch"]
    print(f"transformers AlbertModel (token ids, no tokenisation): batch 1 "
          f"{t['latency_ms']:.1f} ms, batch {BATCH.value} "
          f"{t['throughput_per_s']:.1f} examples/s")
    print(f"latency ratio {report['latency_vs_torch']:.2f}x, throughput ratio "
          f"{report['throughput_vs_torch']:.2f}x")


if __name__ == "__main__":
  app.run(main)
