"""The paper's ablations at CPU scale: data, pretraining, evaluation, report.

  python tools/run_ablation.py --experiment=sentence_task \
      --corpus=corpus.txt --work_dir=runs/ablation --train_steps=3000

Experiments: `sentence_task` (none / NSP / SOP, paper Table 5),
`sharing` (all-shared / shared-attention / shared-FFN / not-shared, Table 4),
`embedding_size` (E = 16 / 32 / 64 / 128, Table 3). Writes
WORK_DIR/EXPERIMENT/results.md, results.json and one PNG per held-out metric;
a rerun skips what is done (see albert/experiments/ and docs/experiments.md).
"""

from absl import flags
from absl import logging

from albert.experiments import ablation
from albert.experiments.variants import EXPERIMENTS
from albert.experiments.report import results_table
from albert import cli

EXPERIMENT = flags.DEFINE_enum(
    "experiment", None, list(EXPERIMENTS), "Which ablation."
)
CORPUS = flags.DEFINE_string(
    "corpus",
    None,
    "Text: one sentence per line, blank line between documents.",
)
WORK_DIR = flags.DEFINE_string(
    "work_dir", None, "Data, models and results go here."
)
TRAIN_STEPS = flags.DEFINE_integer(
    "train_steps", 3000, "Steps per variant (same budget)."
)
GIN_FILE = flags.DEFINE_multi_string(
    "gin_file",
    ["gin/tiny.gin", "gin/demo.gin"],
    "Model and recipe, layered after gin/pretrain.gin.",
)
GIN_PARAM = flags.DEFINE_multi_string(
    "gin_param", [], "Extra bindings for every variant."
)
VOCAB_SIZE = flags.DEFINE_integer(
    "vocab_size", 8000, "SentencePiece pieces (at most)."
)
SEQ_LENGTH = flags.DEFINE_integer(
    "seq_length", 128, "max_seq_length of the data."
)
MAX_PREDICTIONS_PER_SEQ = flags.DEFINE_integer(
    "max_predictions_per_seq",
    None,
    "Masked positions per sequence (default: ceil(0.15 x seq_length), "
    "room for every masked position).",
)
DUPE_FACTOR = flags.DEFINE_integer(
    "dupe_factor", 5, "Passes over the training text."
)
HELDOUT_EVERY = flags.DEFINE_integer(
    "heldout_every", 20, "Hold out every N-th document."
)
EVAL_STEPS = flags.DEFINE_integer(
    "eval_steps", 50, "Batches per held-out evaluation."
)
EVAL_POINTS = flags.DEFINE_integer(
    "eval_points", 10, "Held-out evaluations per curve."
)
PARALLEL = flags.DEFINE_integer(
    "parallel",
    1,
    "Variants trained (and evaluated) N at a time, each with cores/N "
    "threads: tiny models use the cores better side by side "
    "(docs/experiments.md).",
)


def main(argv):
  cli.unexpected_arguments(argv)
  logging.set_verbosity(logging.INFO)
  cli.require_flags("experiment", "corpus", "work_dir")
  results = ablation.Ablation(
      experiment=EXPERIMENT.value,
      corpus=CORPUS.value,
      work_dir=WORK_DIR.value,
      train_steps=TRAIN_STEPS.value,
      gin_files=GIN_FILE.value,
      gin_params=GIN_PARAM.value,
      vocab_size=VOCAB_SIZE.value,
      seq_length=SEQ_LENGTH.value,
      max_predictions_per_seq=MAX_PREDICTIONS_PER_SEQ.value,
      dupe_factor=DUPE_FACTOR.value,
      heldout_every=HELDOUT_EVERY.value,
      eval_steps=EVAL_STEPS.value,
      eval_points=EVAL_POINTS.value,
      parallel=PARALLEL.value,
  ).run()
  print(results_table(results))


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
