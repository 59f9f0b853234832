r"""Compares pretraining from documents (masked as read) and from examples.

The `make demo` run (gin/tiny.gin + gin/demo.gin, 1,800 steps of 64
examples at seq 64) once per seed from the demo's offline examples (dupe 5,
fixed masks) and once from the same training text written as documents
(dupe 1, new pairs and masks every epoch); both evaluate on the demo's
held-out examples (`PretrainTask.eval_input_format='examples'`), so the
figures compare. `TrainerConfig.seed` and `PretrainTask.seed` are the seed.
docs/experiments.md, "Dynamic masking", reports a run of:

  make demo   # makes demo_out/ (text, SentencePiece model, examples)
  .venv/bin/python -m albert.experiments.dynamic_masking \
      --demo_dir=demo_out --work_dir=/tmp/dynamic --seeds=1,2,3
"""

import json
import os
import subprocess
import sys

from absl import app
from absl import flags

DEMO_DIR = flags.DEFINE_string("demo_dir", "demo_out", "`make demo` output.")
WORK_DIR = flags.DEFINE_string("work_dir", None, "Where runs go.")
SEEDS = flags.DEFINE_list("seeds", ["1", "2", "3"], "Seeds of the runs.")
STEPS = flags.DEFINE_integer("steps", 1800, "Training steps per run.")


def _documents(demo: str, work: str, settings: dict) -> str:
  out = os.path.join(work, "documents", "train.tfrecord")
  if not os.path.exists(os.path.join(work, "documents", "manifest.json")):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "albert.cli.create_pretraining_data",
            f"--input_file={os.path.join(demo, 'train.txt')}",
            f"--output_file={out}",
            f"--spm_model_file={os.path.join(demo, 'spm.model')}",
            "--output_format=documents",
            f"--max_seq_length={settings['seq_length']}",
            f"--max_predictions_per_seq={settings['max_predictions_per_seq']}",
            "--single_segment=split",  # As the demo's examples.
        ],
        check=True,
    )
  return out


def _run(demo, work, settings, data_format, train_pattern, seed) -> dict:
  model_dir = os.path.join(work, f"{data_format}-seed{seed}")
  metrics = os.path.join(model_dir, "final_metrics.json")
  if not os.path.exists(metrics):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "albert.run_pretraining",
            "--gin_file=gin/tiny.gin",
            "--gin_file=gin/demo.gin",
            f"--model_dir={model_dir}",
            f"--gin_param=AlbertConfig.vocab_size={settings['vocab_size']}",
            f"--gin_param=TRAIN_STEPS={STEPS.value}",
            f"--gin_param=PretrainTask.seq_length={settings['seq_length']}",
            "--gin_param=PretrainTask.max_predictions_per_seq="
            f"{settings['max_predictions_per_seq']}",
            f"--gin_param=PretrainTask.train_file_pattern='{train_pattern}'",
            "--gin_param=PretrainTask.eval_file_pattern="
            f"'{os.path.join(demo, 'data', 'eval.tfrecord')}'",
            f"--gin_param=PretrainTask.input_format='{data_format}'",
            "--gin_param=PretrainTask.eval_input_format='examples'",
            f"--gin_param=PretrainTask.seed={seed}",
            f"--gin_param=TrainerConfig.seed={seed}",
            f"--metrics_file={metrics}",
        ],
        check=True,
    )
  with open(metrics, encoding="utf-8") as f:
    return json.load(f)


def main(argv):
  del argv
  demo, work = DEMO_DIR.value, WORK_DIR.value
  os.makedirs(work, exist_ok=True)
  with open(os.path.join(demo, "settings.json"), encoding="utf-8") as f:
    settings = json.load(f)
  train = {
      "examples": os.path.join(demo, "data", "train.tfrecord"),
      "documents": _documents(demo, work, settings),
  }
  results = {}
  for seed in SEEDS.value:
    for data_format, pattern in train.items():
      metrics = _run(demo, work, settings, data_format, pattern, seed)
      results.setdefault(data_format, []).append(metrics["metrics"])
  with open(os.path.join(work, "results.json"), "w", encoding="utf-8") as f:
    json.dump(results, f, indent=2)
  for data_format, runs in results.items():
    for name in ("masked_lm_accuracy", "masked_lm_loss"):
      values = [run[name] for run in runs]
      print(
          f"{data_format:9s} held-out {name}: "
          + ", ".join(f"{v:.4f}" for v in values)
          + f" (mean {sum(values) / len(values):.4f}, spread "
          f"{max(values) - min(values):.4f})"
      )


if __name__ == "__main__":
  flags.mark_flag_as_required("work_dir")
  app.run(main)
