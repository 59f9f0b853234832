r"""Training speed and memory per precision, against transformers at best.

  python tools/benchmark_train.py --gin_file=gin/base.gin --batch_size=32 \
      --seq_length=128 [--precision=float32|mixed_bfloat16|mixed_float16|all] \
      [--task=pretraining|classification] [--steps=3] [--rounds=5] [--json]

For each precision, on synthetic inputs of the given shapes:
  ours     whole optimizer steps of the real training loop
           (`official.core.trainer`: forward, backward, LAMB, clipping) under
           the Keras policy of that precision, with TensorFlow's kernels (`tf`)
           and with XLA (`tf_xla`);
  peer     transformers' `AlbertForPreTraining` (the same shapes, embedding
           size and groups; MLM head on the masked positions only, AdamW,
           clipping) eager and under `torch.compile`, in float32 or under
           `torch.autocast` of the precision. Reduced-precision peers run only
           where the CPU computes that type natively (see
           `official.benchmark.cpu_info`); the report says so otherwise.
Stage 1 runs every variant alone in a fresh process (warm-up, `--steps` timed
steps, its own peak RSS). Stage 2 runs the fastest of ours and the fastest peer
of the precision side by side, in the processes stage 1 started (kept up,
idle, meanwhile: at most three at once), taking turns step by step for
`--rounds` rounds (`official.benchmark.turns`): the speed ratio is the median
of the per-round ratios. Last, alone, it measures the precision's
matrix-multiply rate at the model's largest product ([B*T, H] x [H,
intermediate]), the ceiling for the achieved GFLOP/s of a step whose products
run on TensorFlow's kernels, and for the mix of products an encoder block runs
forward and backward (x W, dy W^T and x^T dy of its six dense layers), the
ceiling a step made only of those products would reach. A step faster than
that (XLA computing emulated bfloat16 products in float32) gets a note. The
measuring is `albert.benchmarks.training`.

--task=classification measures fine-tuning instead: ours is MNLI's `GlueTask`
(3 classes, the pooled output, dropout 0.1, one dense layer) trained with AdamW,
the peer transformers' `AlbertForSequenceClassification` (same head and
dropout) with `torch.optim.AdamW`; the same report and JSON keys.

--against_gin_param=BINDING (repeatable) measures what a setting changes:
ours with TensorFlow's kernels also runs with the extra gin bindings, alone
and taking turns with ours without them (`against` in each precision's JSON).
"""

import json

from absl import flags

from albert import cli
from albert.benchmarks import training

GIN_FILES = flags.DEFINE_multi_string(
    "gin_file", ["gin/base.gin"], "Model size gin files, layered."
)
GIN_PARAMS = flags.DEFINE_multi_string("gin_param", [], "Extra gin bindings.")
BATCH = flags.DEFINE_integer("batch_size", 32, "Examples per step.")
SEQ = flags.DEFINE_integer("seq_length", 128, "Tokens per example.")
PREDICTIONS = flags.DEFINE_integer(
    "max_predictions_per_seq", 20, "Masked positions per example."
)
PRECISION = flags.DEFINE_enum(
    "precision",
    "float32",
    training.PRECISIONS + ("all",),
    "Keras mixed-precision policy to measure.",
)
STEPS = flags.DEFINE_integer("steps", 3, "Timed steps per variant, alone.")
WARMUP = flags.DEFINE_integer("warmup_steps", 2, "Untimed steps first.")
ROUNDS = flags.DEFINE_integer(
    "rounds", 5, "Rounds of turns between the two fastest."
)
JSON = flags.DEFINE_bool("json", False, "Print one JSON object.")
TORCH = flags.DEFINE_bool(
    "torch", True, "Also measure transformers' PyTorch model if present."
)
TORCH_COMPILE = flags.DEFINE_bool(
    "torch_compile",
    True,
    "With --torch: also under torch.compile, the peer at its best (its "
    "compile takes minutes on a CPU; --notorch_compile measures eager only, "
    "which is no headline).",
)


RECOMPUTE = flags.DEFINE_bool(
    "recompute",
    False,
    "Ours with TrainerConfig.recompute: each block's activations recomputed "
    "in the backward pass (less memory, a second forward pass).",
)
XLA = flags.DEFINE_bool("xla", True, "Also measure ours under XLA.")
AGAINST = flags.DEFINE_multi_string(
    "against_gin_param",
    [],
    "Also measure ours (TF kernels) with these extra gin bindings, alone and "
    "taking turns with ours without them: what one setting changes, e.g. "
    "TrainerConfig.fused_kernels=False.",
)
TASK = flags.DEFINE_enum(
    "task",
    "pretraining",
    list(training.TASKS),
    "pretraining (MLM + SOP) or classification (fine-tuning a 3-class "
    "sequence classifier with AdamW).",
)


def main(argv):
  cli.unexpected_arguments(argv)
  settings = training.TrainBenchmark(
      task=TASK.value,
      gin_files=tuple(GIN_FILES.value),
      gin_params=tuple(GIN_PARAMS.value),
      batch_size=BATCH.value,
      seq_length=SEQ.value,
      max_predictions_per_seq=PREDICTIONS.value,
      precision=PRECISION.value,
      steps=STEPS.value,
      warmup_steps=WARMUP.value,
      rounds=ROUNDS.value,
      torch=TORCH.value,
      torch_compile=TORCH_COMPILE.value,
      recompute=RECOMPUTE.value,
      xla=XLA.value,
      against_gin_params=tuple(AGAINST.value),
  )
  report = training.measure(settings)
  if JSON.value:
    print(json.dumps(report, sort_keys=True))
  else:
    print(training.format_report(report, ROUNDS.value))


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
