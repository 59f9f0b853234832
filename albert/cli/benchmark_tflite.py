r"""Batch-1 latency of the TFLite encoder against the SavedModel.

  python tools/benchmark_tflite.py [--gin_file=gin/base.gin] \
      [--seq_length=128] [--repeats=30] [--num_threads=N] [--json]

Builds a randomly initialised encoder of the given size and writes, from the
same weights, the `encoder` SavedModel (as `albert.run_export` does) and the
TFLite flatbuffers of `albert.export_tflite` in float32 and dynamic-range int8.
Each then runs in a process of its own on the same batch-1 token ids
(`seq_length` of them; tokenisation is not timed):

  saved_model       the encoder SavedModel called as TF Hub calls it
                    (`encoder(inputs)`), TensorFlow's kernels: the baseline;
  saved_model_xla   the same call XLA-compiled (`tf.function(jit_compile=True)`
                    around it), TensorFlow at its best on a CPU;
  tflite_float32    the float32 flatbuffer in `tf.lite.Interpreter`;
  tflite_dynamic_int8  int8 weights, float activations.

The processes take turns call by call (only one computes at a time), so a
change of machine load hits all of them alike; each ratio is the median of
the per-round ratios to the baseline measured in the same run. The report
also gives each one's largest difference from the baseline's
`pooled_output`, its size on disk and its peak memory.
"""

import json
import os
import statistics
import sys
import tempfile

from absl import flags

from albert import cli
from albert import REPO_ROOT
from official.benchmark import turns
from official.errors import CommandError
from official.errors import InputError

GIN_FILES = flags.DEFINE_multi_string(
    "gin_file", ["gin/base.gin"], "Model size."
)
GIN_PARAMS = flags.DEFINE_multi_string("gin_param", [], "Extra gin bindings.")
SEQ = flags.DEFINE_integer("seq_length", 128, "Tokens per example.")
REPEATS = flags.DEFINE_integer("repeats", 30, "Timed rounds.")
THREADS = flags.DEFINE_integer(
    "num_threads",
    0,
    "Threads of the TFLite interpreter (0: the cores this process may use, "
    "as TensorFlow uses).",
)
JSON = flags.DEFINE_bool("json", False, "Print one JSON object.")

BASELINE = "saved_model"

# Every worker builds `run()` (one timed call) and `pooled()`, warms up, then
# speaks the protocol of `official.benchmark.turns` (written out here so that
# the processes import nothing but TensorFlow): one JSON line, the seconds of
# one call per stdin line, its peak RSS when stdin closes.
_SERVE_LOOP = r"""
import resource
for _ in range(3):
  run()
print(json.dumps(dict(info, pooled=pooled().tolist())), flush=True)
for line in sys.stdin:
  start = time.perf_counter()
  run()
  print(time.perf_counter() - start, flush=True)
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"peak_rss_mb": rss_mb}), flush=True)
"""

_INPUTS = r"""
import json, sys, time
import numpy as np
SEQ, VOCAB = int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
ids = rng.integers(5, VOCAB, size=(1, SEQ)).astype(np.int32)
feed = {"input_word_ids": ids, "input_mask": np.ones_like(ids),
        "input_type_ids": np.zeros_like(ids)}
"""

_SAVED_MODEL_WORKER = (
    _INPUTS
    + r"""
import tensorflow as tf
encoder = tf.saved_model.load(sys.argv[1])
inputs = {k: tf.constant(v) for k, v in feed.items()}
def call(inputs):
  outputs = encoder(inputs, training=False)
  return outputs["pooled_output"], outputs["sequence_output"]
if sys.argv[4] == "xla":
  call = tf.function(call, jit_compile=True)
def run():
  for t in call(inputs):
    t.numpy()
def pooled():
  return call(inputs)[0].numpy()[0]
info = {"xla": sys.argv[4] == "xla", "threads": "TensorFlow's default"}
"""
    + _SERVE_LOOP
)

_TFLITE_WORKER = (
    _INPUTS
    + r"""
import tensorflow as tf
threads = int(sys.argv[4])
interpreter = tf.lite.Interpreter(model_path=sys.argv[1], num_threads=threads)
runner = interpreter.get_signature_runner("serving_default")
def run():
  outputs = runner(**feed)
  outputs["pooled_output"].sum(), outputs["sequence_output"].sum()
def pooled():
  return runner(**feed)["pooled_output"][0]
info = {"threads": threads}
"""
    + _SERVE_LOOP
)


def _size_mb(path: str) -> float:
  if os.path.isfile(path):
    return os.path.getsize(path) / 1e6
  total = 0
  for root, _, files in os.walk(path):
    total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
  return total / 1e6


def _worker(name, script, args):
  return turns.Worker(
      name, [sys.executable, "-c", script] + [str(a) for a in args]
  )


def _progress(message: str) -> None:
  print(f"benchmark_tflite: {message}", file=sys.stderr, flush=True)


def main(argv):
  cli.unexpected_arguments(argv)
  import numpy as np
  import tensorflow as tf
  from albert.modeling.config import AlbertConfig
  from albert.modeling.encoder import AlbertEncoder
  from albert.modeling.pretrainer import AlbertPretrainer
  from albert.serving import tflite_export
  from albert.serving.hub_encoder_module import HubEncoderModule
  from official.benchmark import cpu_info
  from official.config import gin_files

  gin_files.parse_gin(
      GIN_FILES.value, GIN_PARAMS.value, search_paths=[REPO_ROOT]
  )
  config = AlbertConfig()
  seq = SEQ.value
  if not 2 <= seq <= config.max_position_embeddings:
    raise InputError(
        f"--seq_length={seq}: the model takes 2 to "
        f"{config.max_position_embeddings} tokens"
    )
  if REPEATS.value < 1:
    raise InputError(f"--repeats={REPEATS.value} must be at least 1")
  if THREADS.value < 0:
    raise InputError(f"--num_threads={THREADS.value} must be 0 or more")
  threads = THREADS.value or cpu_info.available_cores()
  cpu = cpu_info.read()
  tf.random.set_seed(0)
  pretrainer = AlbertPretrainer(AlbertEncoder.from_config_object(config))
  pretrainer(pretrainer.dummy_inputs())
  workers = []
  try:
    with tempfile.TemporaryDirectory() as tmp:
      saved_model = os.path.join(tmp, "encoder")
      _progress("exporting the SavedModel ...")
      module = HubEncoderModule(pretrainer)
      tf.saved_model.save(module, saved_model, signatures=module.signatures())
      paths = {BASELINE: saved_model, "saved_model_xla": saved_model}
      for precision in tflite_export.PRECISIONS:
        _progress(f"converting to TFLite, {precision} ...")
        path = os.path.join(tmp, f"encoder_{precision}.tflite")
        flatbuffer = tflite_export.convert(
            pretrainer.encoder,
            tflite_export.encoder_outputs,
            seq_length=seq,
            precision=precision,
        )
        tflite_export.write(path, flatbuffer)
        paths[f"tflite_{precision}"] = path
      _progress("loading and warming up ...")
      for name, path in paths.items():
        if name.startswith("tflite"):
          script, mode = _TFLITE_WORKER, threads
        else:
          script, mode = _SAVED_MODEL_WORKER, "xla" if "xla" in name else "tf"
        workers.append(
            _worker(name, script, [path, seq, config.vocab_size, mode])
        )
      sizes = {name: _size_mb(path) for name, path in paths.items()}
    _progress(f"timing {len(workers)} processes in turn ...")
    times = turns.take_turns(workers, REPEATS.value)
  except turns.WorkerError as e:  # a worker process failed: its error line
    raise CommandError(str(e)) from e
  finally:
    finals = {w.name: w.close() for w in workers}

  baseline = np.array(workers[0].info["pooled"])
  report = {
      "seq_length": seq,
      "batch_size": 1,
      "rounds": REPEATS.value,
      "hidden_size": config.hidden_size,
      "num_layers": config.num_layers,
      "cpu": cpu.to_dict(),
      "cpu_description": cpu.describe(),
  }
  for w in workers:
    info = {k: v for k, v in w.info.items() if k != "pooled"}
    report[w.name] = dict(
        info,
        **finals[w.name],
        latency_ms=1000 * statistics.median(times[w.name]),
        size_mb=sizes[w.name],
        max_abs_diff=float(np.abs(np.array(w.info["pooled"]) - baseline).max()),
        vs_saved_model=turns.paired_ratio(times, w.name, BASELINE),
    )
  if JSON.value:
    print(json.dumps(report, sort_keys=True))
    return
  print(f"CPU: {report['cpu_description']}")
  print(
      f"ALBERT encoder, hidden {config.hidden_size}, {config.num_layers} "
      f"layers, batch 1 x {seq} token ids; median of {REPEATS.value} rounds"
  )
  print(
      f"{'':22} {'latency':>10} {'x SavedModel':>13} {'size':>9} "
      f"{'max |diff|':>11}"
  )
  for w in workers:
    r = report[w.name]
    print(
        f"{w.name:22} {r['latency_ms']:8.2f}ms {r['vs_saved_model']:12.2f}x "
        f"{r['size_mb']:7.1f}MB {r['max_abs_diff']:11.1e}"
    )
  print(
      "x SavedModel: median of the per-round ratios to saved_model "
      "(TensorFlow kernels, no XLA); max |diff|: pooled_output against it"
  )


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
