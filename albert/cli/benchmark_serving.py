r"""Serving latency and throughput of an exported ALBERT, tokenisation included.

  python tools/benchmark_serving.py --gin_file=gin/base.gin \
      --spm_model_file=demo_out/spm.model [--seq_length=128] \
      [--precision=float32|bfloat16] [--json]

Exports a randomly initialised model of the given size (vocab_size taken from
the SentencePiece model) as the serving SavedModel and times `serving_default`
on raw text that fills `seq_length` tokens: the median latency at batch 1 and
the throughput at batch `--batch_size`. The SavedModel runs in a fresh process
that imports only TensorFlow and TF-Text.

`--precision=bfloat16` exports and times the bfloat16 model
(`albert.run_export --precision=bfloat16`). "saved_model" is the export at a
fixed length with the encoder compiled by XLA (`run_export
--nodynamic_length --xla`).

The request mix (`--mix`, on by default): short texts of 10 to 60 tokens, the
same texts in the same order for every contestant, at batch 1 (one text per
call) and batch `--batch_size`: the fixed-length export against the default
dynamic-length export and its `--xla` form (each batch padded to its longest
text), and our ONNX export in float32 and int8 (`--quantize=int8`) with each
batch padded to its longest text.

In the same run, each in a process of its own, it also times
  - the encoder's matrix products alone (the same shapes and precision,
    chained as in the model, with TF's kernels or XLA, whichever is faster):
    the floor that everything else adds to;
  - our ONNX export of the same model (`run_export --format=onnx`) on
    onnxruntime, float32 and int8 (`--quantize=int8`), on token ids (no
    tokenisation), when `onnx` and `onnxruntime` are importable (float32
    exports only);
  - Hugging Face's PyTorch `AlbertModel` forward pass at the same shapes on
    token ids (no tokenisation), when `torch` and `transformers` are importable,
    under `torch.autocast` for bfloat16 (only on CPUs with native bfloat16).
The processes take turns call by call (only one computes at a time), so a
change of machine load hits all of them alike; the printed ratios are medians
of the per-round ratios.
"""

import json

from absl import flags

from albert import cli
from albert.benchmarks import serving

GIN_FILES = flags.DEFINE_multi_string(
    "gin_file", ["gin/base.gin"], "Model size."
)
SPM = flags.DEFINE_string("spm_model_file", None, "SentencePiece model.")
SEQ = flags.DEFINE_integer("seq_length", 128, "Tokens per example.")
BATCH = flags.DEFINE_integer("batch_size", 32, "Batch of the throughput run.")
REPEATS = flags.DEFINE_integer("repeats", 20, "Timed rounds at batch 1.")
BATCH_REPEATS = flags.DEFINE_integer(
    "batch_repeats", 3, "Timed rounds at --batch_size."
)
JSON = flags.DEFINE_bool("json", False, "Print one JSON object.")
TORCH = flags.DEFINE_bool(
    "torch", True, "Measure the PyTorch baseline if present."
)
ONNX = flags.DEFINE_bool(
    "onnx", True, "Measure our ONNX export on onnxruntime if present."
)
MIX = flags.DEFINE_bool(
    "mix",
    True,
    "Also time the request mix of short texts: the fixed-length export "
    "against the dynamic-length ones, and onnxruntime float32 and int8.",
)
MIX_ROUNDS = flags.DEFINE_integer(
    "mix_rounds", 60, "Timed rounds at batch 1 on the request mix."
)
PRECISION = flags.DEFINE_enum(
    "precision",
    "float32",
    serving.PRECISIONS,
    "Export precision (albert.run_export --precision); the matrix "
    "products floor runs in it and PyTorch under autocast of it, the latter "
    "only where the CPU has native bfloat16 instructions.",
)


def main(argv):
  cli.unexpected_arguments(argv)
  cli.require_flags("spm_model_file")
  report = serving.measure(
      serving.ServingBenchmark(
          spm_model_file=SPM.value,
          gin_files=tuple(GIN_FILES.value),
          seq_length=SEQ.value,
          batch_size=BATCH.value,
          repeats=REPEATS.value,
          batch_repeats=BATCH_REPEATS.value,
          torch=TORCH.value,
          onnx=ONNX.value,
          precision=PRECISION.value,
          mix=MIX.value,
          mix_rounds=MIX_ROUNDS.value,
      )
  )
  if JSON.value:
    print(json.dumps(report, sort_keys=True))
  else:
    print(serving.format_report(report))


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
