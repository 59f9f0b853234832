"""The paper's ablations at CPU scale: data, pretraining, evaluation, report.

  python tools/run_ablation.py --experiment=sentence_task \
      --corpus=corpus.txt --work_dir=runs/ablation --train_steps=3000

Experiments: `sentence_task` (none / NSP / SOP, paper Table 5),
`sharing` (all-shared / shared-attention / shared-FFN / not-shared, Table 4),
`embedding_size` (E = 16 / 32 / 64 / 128, Table 3). Writes
WORK_DIR/EXPERIMENT/results.md, results.json and one PNG per held-out metric;
a rerun skips what is done (see albert/ablation.py and docs/experiments.md).
"""

from absl import flags
from absl import logging

from albert import ablation
from albert import cli

FLAGS = flags.FLAGS
flags.DEFINE_enum(
    "experiment", None, list(ablation.EXPERIMENTS), "Which ablation."
)
flags.DEFINE_string(
    "corpus",
    None,
    "Text: one sentence per line, blank line between documents.",
)
flags.DEFINE_string("work_dir", None, "Data, models and results go here.")
flags.DEFINE_integer("train_steps", 3000, "Steps per variant (same budget).")
flags.DEFINE_multi_string(
    "gin_file",
    ["gin/tiny.gin", "gin/demo.gin"],
    "Model and recipe, layered after gin/pretrain.gin.",
)
flags.DEFINE_multi_string("gin_param", [], "Extra bindings for every variant.")
flags.DEFINE_integer("vocab_size", 8000, "SentencePiece pieces (at most).")
flags.DEFINE_integer("seq_length", 128, "max_seq_length of the data.")
flags.DEFINE_integer(
    "max_predictions_per_seq",
    None,
    "Masked positions per sequence (default: ceil(0.15 x seq_length), "
    "room for every masked position).",
)
flags.DEFINE_integer("dupe_factor", 5, "Passes over the training text.")
flags.DEFINE_integer("heldout_every", 20, "Hold out every N-th document.")
flags.DEFINE_integer("eval_steps", 50, "Batches per held-out evaluation.")
flags.DEFINE_integer("eval_points", 10, "Held-out evaluations per curve.")
flags.DEFINE_integer(
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
      experiment=FLAGS.experiment,
      corpus=FLAGS.corpus,
      work_dir=FLAGS.work_dir,
      train_steps=FLAGS.train_steps,
      gin_files=FLAGS.gin_file,
      gin_params=FLAGS.gin_param,
      vocab_size=FLAGS.vocab_size,
      seq_length=FLAGS.seq_length,
      max_predictions_per_seq=FLAGS.max_predictions_per_seq,
      dupe_factor=FLAGS.dupe_factor,
      heldout_every=FLAGS.heldout_every,
      eval_steps=FLAGS.eval_steps,
      eval_points=FLAGS.eval_points,
      parallel=FLAGS.parallel,
  ).run()
  print(ablation.results_table(results))


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
