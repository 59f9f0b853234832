"""Serving latency and throughput of the raw-text SavedModel, against its own
matrix products, our ONNX export on onnxruntime and transformers: the
measuring behind
`tools/benchmark_serving.py` (its --help says what is measured).
"""

import dataclasses
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Dict, Sequence

import sentencepiece as spm

from albert import configs
from albert.modeling.config import AlbertConfig
from albert.modeling.pretrainer import AlbertPretrainer
from albert.serving import onnx_export
from albert.serving.exporter import export
from official.benchmark import cpu_info
from official.benchmark import turns
from official.errors import CommandError
from official.errors import InputError
from official.errors import first_line
from official.modeling import precision as precision_lib

PRECISIONS = ("float32", "bfloat16")


@dataclasses.dataclass(frozen=True)
class ServingBenchmark:
  """What to measure (the command's flags of the same names)."""

  spm_model_file: str
  gin_files: Sequence[str] = ("gin/base.gin",)
  seq_length: int = 128
  batch_size: int = 32
  repeats: int = 20
  batch_repeats: int = 3
  torch: bool = True
  onnx: bool = True
  precision: str = "float32"


# Every worker builds `run(batch_size)` (one timed call), warms it up, then
# speaks the protocol of `official.benchmark.turns` (written out here so that
# the SavedModel's process imports nothing but TensorFlow and TF-Text): one
# JSON line, the seconds of one call per stdin line "<batch_size>", and its
# peak RSS when stdin closes.
_SERVE_LOOP = r"""
import resource
for _ in range(3):
  run(1)
run(BATCH)
print(json.dumps(info), flush=True)
for line in sys.stdin:
  start = time.perf_counter()
  run(int(line))
  print(time.perf_counter() - start, flush=True)
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"peak_rss_mb": rss_mb}), flush=True)
"""

_SAVED_MODEL_WORKER = (
    r"""
import json, sys, time
import tensorflow as tf
import tensorflow_text
path, SEQ, BATCH = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
serve = tf.saved_model.load(path).signatures["serving_default"]
text = " ".join(["the quick brown fox jumps over the lazy dog"] * (SEQ // 4))
texts = {1: tf.constant([text]), BATCH: tf.constant([text] * BATCH)}
def run(batch):
  serve(text=texts[batch])["pooled_output"].numpy()
info = {"tokens": int(serve(text=texts[1])["input_mask"].numpy().sum())}
"""
    + _SERVE_LOOP
)

_MATMUL_WORKER = (
    r"""
import json, math, sys, time
import numpy as np
import tensorflow as tf
E, H, N, F, L, SEQ, BATCH = map(int, sys.argv[1:8])
DTYPE = tf.as_dtype(sys.argv[8])
D = H // N
rng = np.random.default_rng(0)
def weight(k, n, scale=1.0):
  # Scaled so that the chain keeps unit variance (no overflow or denormals).
  w = rng.standard_normal((k, n), dtype=np.float32) * scale / math.sqrt(k)
  return tf.Variable(tf.cast(w, DTYPE))
proj, wq, wk = weight(E, H), weight(H, H, 1 / math.sqrt(D)), weight(H, H)
wv, wo = weight(H, H, 1 / math.sqrt(SEQ)), weight(H, H)
w1, w2, wp = weight(H, F), weight(F, H), weight(H, H)
def products(x):
  batch = tf.shape(x)[0] // SEQ
  def heads(t):
    return tf.transpose(tf.reshape(t, [batch, SEQ, N, D]), [0, 2, 1, 3])
  h = tf.matmul(x, proj)
  for _ in range(L):
    queries, keys = heads(tf.matmul(h, wq)), heads(tf.matmul(h, wk))
    scores = tf.matmul(queries, keys, transpose_b=True)
    context = tf.matmul(scores, heads(tf.matmul(h, wv)))
    context = tf.reshape(tf.transpose(context, [0, 2, 1, 3]), [batch * SEQ, H])
    h = tf.matmul(tf.matmul(tf.matmul(context, wo), w1), w2)
  return tf.matmul(tf.reshape(h, [batch, SEQ, H])[:, 0], wp)
inputs = {
    b: tf.cast(rng.standard_normal((b * SEQ, E), dtype=np.float32), DTYPE)
    for b in (1, BATCH)
}
# The floor is whichever of TF's kernels or XLA runs the products faster
# (TF at large shapes; XLA when per-op overhead dominates).
def median_seconds(f, calls=5):
  f(inputs[1])
  times = []
  for _ in range(calls):
    start = time.perf_counter()
    f(inputs[1]).numpy()
    times.append(time.perf_counter() - start)
  return sorted(times)[calls // 2]
compiled = {
    xla: tf.function(products, jit_compile=xla) for xla in (False, True)
}
xla = median_seconds(compiled[True]) < median_seconds(compiled[False])
def run(batch):
  compiled[xla](inputs[batch]).numpy()
info = {"xla": xla}
"""
    + _SERVE_LOOP
)

_ONNX_WORKER = (
    r"""
import json, sys, time
import numpy as np
import onnxruntime
path = sys.argv[1]
V, SEQ, BATCH = map(int, sys.argv[2:5])
session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
rng = np.random.default_rng(0)
feeds = {}
for b in (1, BATCH):
  ids = rng.integers(5, V, (b, SEQ)).astype(np.int32)
  feeds[b] = {"input_word_ids": ids, "input_mask": np.ones_like(ids),
              "input_type_ids": np.zeros_like(ids)}
def run(batch):
  session.run(["pooled_output"], feeds[batch])
info = {"onnxruntime": onnxruntime.__version__}
"""
    + _SERVE_LOOP
)

_TORCH_WORKER = (
    r"""
import json, sys, time
import torch, transformers
import contextlib
V, E, H, N, F, LAYERS, G, K, SEQ, BATCH = map(int, sys.argv[1:11])
AUTOCAST = sys.argv[11]
config = transformers.AlbertConfig(
    vocab_size=V, embedding_size=E, hidden_size=H, num_hidden_layers=LAYERS,
    num_attention_heads=N, intermediate_size=F, num_hidden_groups=G,
    inner_group_num=K, hidden_act="gelu_new", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0)
model = transformers.AlbertModel(config).eval()
ids = {b: torch.randint(5, V, (b, SEQ)) for b in (1, BATCH)}
def run(batch):
  with torch.no_grad(), (torch.autocast("cpu", dtype=getattr(torch, AUTOCAST))
                         if AUTOCAST != "none" else contextlib.nullcontext()):
    model(input_ids=ids[batch])
info = {"threads": torch.get_num_threads(), "autocast": AUTOCAST}
"""
    + _SERVE_LOOP
)


def _worker(name, script, args):
  return turns.Worker(
      name, [sys.executable, "-c", script] + [str(a) for a in args]
  )


def measure(s: ServingBenchmark) -> Dict:
  """Exports a random model of the gin size, times every worker in turns;
  the report (latencies, throughputs, paired ratios)."""
  configs.parse(s.gin_files)
  try:
    vocab = spm.SentencePieceProcessor(
        model_file=s.spm_model_file
    ).get_piece_size()
  except (OSError, RuntimeError) as e:  # sentencepiece's errors name no errno
    raise InputError(
        f"cannot load --spm_model_file {s.spm_model_file}: {first_line(e)}; "
        "give a SentencePiece model (tools/train_sentencepiece.py trains one)"
    ) from e
  config = AlbertConfig().replace(vocab_size=vocab)
  c, seq, batch = config, s.seq_length, s.batch_size
  with precision_lib.policy_scope(precision_lib.serving_policy(s.precision)):
    pretrainer = AlbertPretrainer.from_config_object(config)
  cpu = cpu_info.read()
  have_torch = (
      s.torch
      and subprocess.run(
          [sys.executable, "-c", "import torch, transformers"],
          capture_output=True,
      ).returncode
      == 0
  )
  have_onnx = (
      s.onnx
      and s.precision == "float32"  # the ONNX export is float32
      and subprocess.run(
          [sys.executable, "-c", "import onnx, onnxruntime"],
          capture_output=True,
      ).returncode
      == 0
  )
  note = None
  if have_torch and s.precision == "bfloat16" and not cpu.bf16:
    have_torch = False
    note = (
        f"{cpu.model} has no native bfloat16 matrix instructions: "
        "PyTorch is not run under bfloat16 autocast"
    )
  workers = []
  try:
    with tempfile.TemporaryDirectory() as tmp:
      export_dir = os.path.join(tmp, "export")
      print("benchmark_serving: exporting ...", file=sys.stderr, flush=True)
      export(
          pretrainer,
          spm_model_file=s.spm_model_file,
          export_dir=export_dir,
          seq_length=seq,
      )
      print(
          "benchmark_serving: loading and warming up ...",
          file=sys.stderr,
          flush=True,
      )
      workers.append(
          _worker(
              "saved_model",
              _SAVED_MODEL_WORKER,
              [os.path.join(export_dir, "serving"), seq, batch],
          )
      )
      if have_onnx:
        path = onnx_export.write(
            pretrainer.encoder, os.path.join(tmp, "encoder.onnx")
        )
        workers.append(
            _worker(
                "onnxruntime", _ONNX_WORKER, [path, c.vocab_size, seq, batch]
            )
        )
    workers.append(
        _worker(
            "matmul_floor",
            _MATMUL_WORKER,
            [
                c.embedding_size,
                c.hidden_size,
                c.num_heads,
                c.intermediate_size,
                c.num_layers * c.inner_group_num,
                seq,
                batch,
                s.precision,
            ],
        )
    )
    if have_torch:
      workers.append(
          _worker(
              "torch",
              _TORCH_WORKER,
              [
                  c.vocab_size,
                  c.embedding_size,
                  c.hidden_size,
                  c.num_heads,
                  c.intermediate_size,
                  c.num_layers,
                  c.num_hidden_groups,
                  c.inner_group_num,
                  seq,
                  batch,
                  "none" if s.precision == "float32" else s.precision,
              ],
          )
      )
    print(
        f"benchmark_serving: timing {len(workers)} processes in turn ...",
        file=sys.stderr,
        flush=True,
    )
    one = turns.take_turns(workers, s.repeats, request="1")
    many = turns.take_turns(workers, s.batch_repeats, request=str(batch))
  except turns.WorkerError as e:  # a worker process failed: its error line
    raise CommandError(str(e)) from e
  finally:
    finals = {w.name: w.close() for w in workers}

  report = {
      "seq_length": seq,
      "batch_size": batch,
      "rounds": s.repeats,
      "precision": s.precision,
      "cpu": cpu.to_dict(),
      "cpu_description": cpu.describe(),
  }
  if note:
    report["note"] = note
  for w in workers:
    report[w.name] = dict(
        w.info,
        **finals[w.name],
        latency_ms=1000 * statistics.median(one[w.name]),
        throughput_per_s=batch / statistics.median(many[w.name]),
    )
  report["floor_vs_saved_model"] = turns.paired_ratio(
      one, "matmul_floor", "saved_model"
  )
  report["saved_model_vs_floor"] = turns.paired_ratio(
      one, "saved_model", "matmul_floor"
  )
  if have_onnx:
    report["latency_vs_onnxruntime"] = turns.paired_ratio(
        one, "saved_model", "onnxruntime"
    )
    report["throughput_vs_onnxruntime"] = turns.paired_ratio(
        many, "onnxruntime", "saved_model"
    )
  if have_torch:
    report["latency_vs_torch"] = turns.paired_ratio(one, "saved_model", "torch")
    report["floor_vs_torch"] = turns.paired_ratio(one, "matmul_floor", "torch")
    report["throughput_vs_torch"] = turns.paired_ratio(
        many, "torch", "saved_model"
    )
  return report


def format_report(report: Dict) -> str:
  """The report as docs/serving.md shows it."""
  lines = []
  seq, batch = report["seq_length"], report["batch_size"]
  precision, rounds = report["precision"], report["rounds"]
  have_torch = "torch" in report
  note = report.get("note")
  ours, floor = report["saved_model"], report["matmul_floor"]
  lines.append(f"CPU: {report['cpu_description']}")
  lines.append(
      f"{precision} serving SavedModel (raw text, tokenisation "
      f"included), seq {seq}: "
      f"batch 1 latency {ours['latency_ms']:.1f} ms "
      f"(median of {rounds}), "
      f"batch {batch} throughput {ours['throughput_per_s']:.1f} examples/s"
  )
  lines.append(
      f"its {precision} matrix products alone "
      f"({'XLA' if floor['xla'] else 'TF kernels, no XLA'}): batch 1 "
      f"{floor['latency_ms']:.1f} ms; the SavedModel takes "
      f"{report['saved_model_vs_floor']:.2f}x of it"
  )
  if "onnxruntime" in report:
    o = report["onnxruntime"]
    lines.append(
        f"our ONNX export on onnxruntime {o['onnxruntime']} (token ids, no "
        f"tokenisation): batch 1 {o['latency_ms']:.1f} ms, batch {batch} "
        f"{o['throughput_per_s']:.1f} examples/s; latency ratio "
        f"{report['latency_vs_onnxruntime']:.2f}x, throughput ratio "
        f"{report['throughput_vs_onnxruntime']:.2f}x"
    )
  if have_torch:
    t = report["torch"]
    autocast = "" if t["autocast"] == "none" else f", autocast {t['autocast']}"
    lines.append(
        f"transformers AlbertModel (token ids, no tokenisation, "
        f"{t['threads']} threads{autocast}): batch 1 {t['latency_ms']:.1f} ms, "
        f"batch {batch} {t['throughput_per_s']:.1f} examples/s"
    )
    lines.append(
        f"latency ratio {report['latency_vs_torch']:.2f}x (matrix products "
        f"alone {report['floor_vs_torch']:.2f}x), throughput ratio "
        f"{report['throughput_vs_torch']:.2f}x; medians of paired rounds"
    )
  if note:
    lines.append(note)
  return "\n".join(lines)
