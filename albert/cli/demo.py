r"""`make demo`: corpus -> vocabulary -> TFRecords -> pretraining, on CPU.

  python tools/demo.py [--work_dir=demo_out] [--train_steps=1500]

Every stage runs the real command-line tool (printed before it runs), so the
demo doubles as a worked example:
  1. tools/make_sample_corpus.py: real English from the standard library's
     docstrings; documents are split 95 / 5 into train and held-out eval text;
  2. tools/train_sentencepiece.py: an 8,000-piece unigram model, ALBERT's ids;
  3. tools/create_pretraining_data.py: MLM + SOP TFRecords for both splits;
  4. python -m albert.run_pretraining with gin/tiny.gin and gin/demo.gin;
  5. python -m albert.run_export: encoder, preprocessing and serving
     SavedModels;
  6. tools/query_saved_model.py: a fill_mask answer from the exported model,
     loaded in a fresh process that imports only TensorFlow and TF-Text.
Finished stages are skipped on a rerun; a rerun after an interruption resumes.
"""

import os
import shlex
import shutil
import subprocess
import sys
import time


from absl import flags

from albert import cli
from albert import REPO_ROOT

WORK_DIR = flags.DEFINE_string("work_dir", "demo_out", "Where everything goes.")
TRAIN_STEPS = flags.DEFINE_integer("train_steps", 1500, "Pretraining steps.")
VOCAB_SIZE = flags.DEFINE_integer("vocab_size", 8000, "SentencePiece pieces.")
DUPE_FACTOR = flags.DEFINE_integer("dupe_factor", 5, "Passes over the text.")
CORPUS_MB = flags.DEFINE_float(
    "corpus_mb", None, "Cap the sample corpus (default: all of it)."
)
EVAL_EVERY = 20  # every 20th document is held out for evaluation
FILL_MASK_TEXT = "Return a new [MASK] containing the items of the list."


def _run(args, what):
  print(f"\n== {what}\n$ {' '.join(shlex.quote(a) for a in args)}", flush=True)
  start = time.time()
  result = subprocess.run(args, cwd=REPO_ROOT)
  if result.returncode != 0:
    sys.exit(f"demo: {what} failed (exit {result.returncode}); see above")
  print(f"   ({time.time() - start:.0f} s)", flush=True)


def _split_documents(corpus, train_path, eval_path):
  """Every EVAL_EVERY-th document goes to the held-out eval text."""
  with open(corpus, encoding="utf-8") as f:
    documents = [d for d in f.read().split("\n\n") if d.strip()]
  for path, docs in (
      (train_path, [d for i, d in enumerate(documents) if i % EVAL_EVERY]),
      (eval_path, documents[::EVAL_EVERY]),
  ):
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
      f.write("\n\n".join(d.strip("\n") for d in docs) + "\n")
    os.replace(tmp, path)
  return len(documents)


def main(argv):
  del argv
  work = os.path.abspath(WORK_DIR.value)
  os.makedirs(work, exist_ok=True)
  py = sys.executable
  corpus = os.path.join(work, "corpus.txt")
  train_text = os.path.join(work, "train.txt")
  eval_text = os.path.join(work, "eval.txt")
  spm_prefix = os.path.join(work, "spm")
  if not os.path.exists(corpus):
    cap = [f"--max_mb={CORPUS_MB.value}"] if CORPUS_MB.value else []
    _run(
        [py, "tools/make_sample_corpus.py", f"--output={corpus}", *cap],
        "1/6 sample corpus from the standard library's docstrings",
    )
  if not os.path.exists(eval_text):
    n = _split_documents(corpus, train_text, eval_text)
    print(f"   {n} documents: every {EVAL_EVERY}th held out in {eval_text}")
  if not os.path.exists(spm_prefix + ".model"):
    _run(
        [
            py,
            "tools/train_sentencepiece.py",
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
              "tools/create_pretraining_data.py",
              f"--input_file={text}",
              f"--output_file={output}",
              f"--spm_model_file={spm_prefix}.model",
              "--max_seq_length=128",
              "--max_predictions_per_seq=20",
              f"--dupe_factor={DUPE_FACTOR.value}",
              "--num_output_shards=1",
              "--manifest_file="
              + os.path.join(work, "data", f"{split}.manifest.json"),
          ],
          f"3/6 pretraining data ({split})",
      )
  model_dir = os.path.join(work, "model")
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
          f"--gin_param=PretrainTask.train_file_pattern="
          f"'{os.path.join(work, 'data', 'train*.tfrecord*')}'",
          f"--gin_param=PretrainTask.eval_file_pattern="
          f"'{os.path.join(work, 'data', 'eval*.tfrecord*')}'",
      ],
      "4/6 pretraining ALBERT (gin/tiny.gin + gin/demo.gin) on CPU",
  )
  export_dir = os.path.join(work, "export")
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
      ],
      "5/6 SavedModels for serving",
  )
  _run(
      [
          py,
          "tools/query_saved_model.py",
          f"--saved_model={os.path.join(export_dir, 'serving')}",
          f"--fill_mask={FILL_MASK_TEXT}",
      ],
      "6/6 fill_mask from the exported SavedModel in a fresh process",
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
