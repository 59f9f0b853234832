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
  tflite_float32    the float32 flatbuffer in LiteRT's interpreter
                    (`ai_edge_litert`; TensorFlow's `tf.lite.Interpreter`
                    where LiteRT has no wheel: the report says which);
  tflite_dynamic_int8  int8 weights, float activations.

The processes take turns call by call (only one computes at a time), so a
change of machine load hits all of them alike; each ratio is the median of
the per-round ratios to the baseline measured in the same run. The report
also gives each one's largest difference from the baseline's
`pooled_output`, its size on disk and its peak memory.
"""

import json

from absl import flags

from albert import cli
from albert.benchmarks import tflite

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


def main(argv):
  cli.unexpected_arguments(argv)
  report = tflite.measure(
      tflite.TfliteBenchmark(
          gin_files=tuple(GIN_FILES.value),
          gin_params=tuple(GIN_PARAMS.value),
          seq_length=SEQ.value,
          repeats=REPEATS.value,
          num_threads=THREADS.value,
      )
  )
  if JSON.value:
    print(json.dumps(report, sort_keys=True))
  else:
    print(tflite.format_report(report))


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
