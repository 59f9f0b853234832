r"""`make demo`: corpus -> vocabulary -> TFRecords -> pretraining, on CPU.

  python tools/demo.py [--work_dir=demo_out] [--train_steps=1500]

Every stage runs the real command-line tool (printed before it runs, as
`python -m albert.cli.NAME`, the module behind `tools/NAME.py` and the
`albert-*` console scripts), so the demo doubles as a worked example and runs
from an installed wheel in any directory:
  1. tools/make_sample_corpus.py: real English from the standard library's
     docstrings; documents are split 95 / 5 into train and held-out eval text;
  2. tools/train_sentencepiece.py: an 8,000-piece unigram model, ALBERT's ids;
  3. tools/create_pretraining_data.py: MLM + SOP TFRecords for both splits;
  4. python -m albert.run_pretraining with gin/tiny.gin and gin/demo.gin;
  5. python -m albert.run_export: encoder, preprocessing and serving
     SavedModels;
  6. tools/query_saved_model.py: a fill_mask answer from the exported model,
     loaded in a fresh process that imports only TensorFlow and TF-Text.
Finished stages are skipped on a rerun (pretraining and export when the model
has its --train_steps); a rerun after an interruption resumes.
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
import time

from absl import flags

from albert import cli
from albert.experiments import curves
from official.errors import CommandError
from official.errors import InputError
from official.io import atomic_write

WORK_DIR = flags.DEFINE_string("work_dir", "demo_out", "Where everything goes.")
TRAIN_STEPS = flags.DEFINE_integer("train_steps", 1800, "Pretraining steps.")
VOCAB_SIZE = flags.DEFINE_integer("vocab_size", 3000, "SentencePiece pieces.")
DUPE_FACTOR = flags.DEFINE_integer("dupe_factor", 5, "Passes over the text.")
SEQ_LENGTH = flags.DEFINE_integer(
    "seq_length", 64, "max_seq_length of the data, the model and the export."
)
MAX_PREDICTIONS = flags.DEFINE_integer(
    "max_predictions_per_seq", 10, "Masked positions per sequence (at most)."
)
CORPUS_MB = flags.DEFINE_float(
    "corpus_mb", None, "Cap the sample corpus (default: all of it)."
)
EVAL_EVERY = 20  # every 20th document is held out for evaluation
FILL_MASK_TEXT = "Return a new [MASK] containing the items of the list."


def _run(args, what):
  print(f"\n== {what}\n$ {' '.join(shlex.quote(a) for a in args)}", flush=True)
  start = time.time()
  result = subprocess.run(args)
  if result.returncode != 0:
    raise CommandError(f"{what} failed (exit {result.returncode}); see above")
  print(f"   ({time.time() - start:.0f} s)", flush=True)


def _read_json(path: str) -> dict:
  """PATH's JSON object; {} if there is none (or it is not JSON)."""
  try:
    with open(path, encoding="utf-8") as f:
      value = json.load(f)
  except (OSError, ValueError):
    return {}
  return value if isinstance(value, dict) else {}


def _finished_checkpoint(metrics_file: str):
  """The checkpoint a finished pretraining run evaluated last, or None."""
  return _read_json(metrics_file).get("checkpoint")


def _split_documents(corpus, train_path, eval_path):
  """Every EVAL_EVERY-th document goes to the held-out eval text."""
  with open(corpus, encoding="utf-8") as f:
    documents = [d for d in f.read().split("\n\n") if d.strip()]
  for path, docs in (
      (train_path, [d for i, d in enumerate(documents) if i % EVAL_EVERY]),
      (eval_path, documents[::EVAL_EVERY]),
  ):
    atomic_write.write_atomic(
        path, "\n\n".join(d.strip("\n") for d in docs) + "\n"
    )
  return len(documents)


def _check_settings(path: str) -> None:
  """A rerun skips finished stages, so it must use the settings that made
  them (the training steps may grow: training resumes)."""
  settings = {
      flag.name: flag.value
      for flag in (
          CORPUS_MB,
          VOCAB_SIZE,
          DUPE_FACTOR,
          SEQ_LENGTH,
          MAX_PREDICTIONS,
      )
  }
  if os.path.exists(path):
    with open(path, encoding="utf-8") as f:
      before = json.load(f)
    changed = [
        f"--{k}={before.get(k)} then, {v} now"
        for k, v in settings.items()
        if before.get(k) != v
    ]
    if changed:
      raise InputError(
          f"{os.path.dirname(path)} was made with other settings "
          f"({'; '.join(changed)}); remove it or choose another --work_dir"
      )
    return
  if os.listdir(os.path.dirname(path)):
    raise InputError(
        f"{os.path.dirname(path)} is not empty and has no "
        "settings.json (an older demo's output?); remove it or choose "
        "another --work_dir"
    )
  atomic_write.write_atomic(path, json.dumps(settings, indent=2) + "\n")


def plot_loss(model_dir: str, path: str) -> str:
  """The training loss and held-out masked-LM loss against steps, as a PNG."""
  tags = ("loss", "masked_lm_loss")
  train = curves.read_scalars(os.path.join(model_dir, "train"), tags)
  held_out = curves.read_scalars(os.path.join(model_dir, "eval"), tags)
  return curves.plot(
      path,
      {
          "training loss (MLM + SOP)": train["loss"],
          "training masked-LM loss": train["masked_lm_loss"],
          "held-out masked-LM loss": held_out["masked_lm_loss"],
      },
      ylabel="loss (nats)",
      title="make demo: pretraining loss",
  )


def main(argv):
  cli.unexpected_arguments(argv)
  work = os.path.abspath(WORK_DIR.value)
  os.makedirs(work, exist_ok=True)
  _check_settings(os.path.join(work, "settings.json"))
  py = sys.executable
  corpus = os.path.join(work, "corpus.txt")
  train_text = os.path.join(work, "train.txt")
  eval_text = os.path.join(work, "eval.txt")
  spm_prefix = os.path.join(work, "spm")
  if not os.path.exists(corpus):
    cap = [f"--max_mb={CORPUS_MB.value}"] if CORPUS_MB.value else []
    _run(
        [py, "-m", "albert.cli.make_sample_corpus", f"--output={corpus}", *cap],
        "1/6 sample corpus from the standard library's docstrings",
    )
  if not os.path.exists(eval_text):
    n = _split_documents(corpus, train_text, eval_text)
    print(f"   {n} documents: every {EVAL_EVERY}th held out in {eval_text}")
  if not os.path.exists(spm_prefix + ".model"):
    _run(
        [
            py,
            "-m",
            "albert.cli.train_sentencepiece",
            f"--input={train_text}",
            f"--model_prefix={spm_prefix}",
            f"--vocab_size={VOCAB_SIZE.value}",
        ],
        "2/6 SentencePiece vocabulary",
    )
  for split, text in (("train", train_text), ("eval", eval_text)):
    output = os.path.join(work, "data", f"{split}.tfrecord")
    if not os.path.exists(os.path.join(work, "data", f"{split}.manifest.json")):
      _run(
          [
              py,
              "-m",
              "albert.cli.create_pretraining_data",
              f"--input_file={text}",
              f"--output_file={output}",
              f"--spm_model_file={spm_prefix}.model",
              f"--max_seq_length={SEQ_LENGTH.value}",
              f"--max_predictions_per_seq={MAX_PREDICTIONS.value}",
              f"--dupe_factor={DUPE_FACTOR.value}",
              # Ours, not the original's default: the demo's figures in
              # docs/experiments.md were measured with it.
              "--single_segment=split",
              "--num_output_shards=1",
              "--manifest_file="
              + os.path.join(work, "data", f"{split}.manifest.json"),
          ],
          f"3/6 pretraining data ({split})",
      )
  model_dir = os.path.join(work, "model")
  metrics_file = os.path.join(model_dir, "final_metrics.json")
  trained = _finished_checkpoint(metrics_file)
  if trained and os.path.basename(trained) == f"ckpt-{TRAIN_STEPS.value}":
    print(f"   pretrained already ({trained}): skipped", flush=True)
  else:
    _run(
        [
            py,
            "-m",
            "albert.run_pretraining",
            "--gin_file=gin/tiny.gin",
            "--gin_file=gin/demo.gin",
            f"--model_dir={model_dir}",
            f"--gin_param=AlbertConfig.vocab_size={VOCAB_SIZE.value}",
            f"--gin_param=TRAIN_STEPS={TRAIN_STEPS.value}",
            f"--gin_param=PretrainTask.seq_length={SEQ_LENGTH.value}",
            "--gin_param=PretrainTask.max_predictions_per_seq="
            f"{MAX_PREDICTIONS.value}",
            f"--gin_param=PretrainTask.train_file_pattern="
            f"'{os.path.join(work, 'data', 'train*.tfrecord*')}'",
            f"--gin_param=PretrainTask.eval_file_pattern="
            f"'{os.path.join(work, 'data', 'eval*.tfrecord*')}'",
            f"--metrics_file={metrics_file}",
        ],
        "4/6 pretraining ALBERT (gin/tiny.gin + gin/demo.gin) on CPU",
    )
    trained = _finished_checkpoint(metrics_file)
  export_dir = os.path.join(work, "export")
  # The checkpoint the SavedModels were made from, written after the export.
  exported = os.path.join(work, "export.json")
  if _read_json(exported).get("checkpoint") == trained and os.path.isdir(
      export_dir
  ):
    print(f"   exported already ({export_dir}): skipped", flush=True)
  else:
    if os.path.exists(export_dir):
      shutil.rmtree(export_dir)  # the model may have trained further
    _run(
        [
            py,
            "-m",
            "albert.run_export",
            f"--model_dir={model_dir}",
            f"--spm_model_file={spm_prefix}.model",
            f"--export_dir={export_dir}",
            f"--seq_length={SEQ_LENGTH.value}",
        ],
        "5/6 SavedModels for serving",
    )
    atomic_write.write_atomic(exported, json.dumps({"checkpoint": trained}))
  _run(
      [
          py,
          "-m",
          "albert.cli.query_saved_model",
          f"--saved_model={os.path.join(export_dir, 'serving')}",
          f"--fill_mask={FILL_MASK_TEXT}",
      ],
      "6/6 fill_mask from the exported SavedModel in a fresh process",
  )
  with open(metrics_file, encoding="utf-8") as f:
    final = json.load(f)["metrics"]
  plot = plot_loss(model_dir, os.path.join(work, "loss.png"))
  print(
      f"\nHeld-out documents ({eval_text}), after {TRAIN_STEPS.value} steps: "
      f"masked-LM accuracy {100 * final['masked_lm_accuracy']:.1f}%, "
      f"sentence-order accuracy {100 * final['sentence_order_accuracy']:.1f}% "
      f"(chance 50%).\nLoss curves: {plot}"
  )
  print(
      f"\nDone. Checkpoints, TensorBoard logs and operative_config.gin are in "
      f"{model_dir}\n  tensorboard --logdir {model_dir}\n"
      f"SavedModels (encoder, preprocessing, serving) are in {export_dir}"
  )


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
