r"""Measures the SQuAD v1.1 head with and without its context mask.

The synthetic SQuAD of `synthetic_squad` (1,200 training and 120 dev
questions, a tiny ALBERT from scratch, seq_length 32, 1,000 steps), trained
once per seed with `SquadTask.context_mask` True (ours) and False (the
original `create_v1_model`'s unmasked head); prints dev exact match and F1 of
each run and writes them as JSON. docs/experiments.md, "SQuAD v1.1 context
mask", reports a run of:

  .venv/bin/python -m albert.experiments.squad_context_mask \
      --work_dir=/tmp/squad_mask --seeds=1,2
"""

import json
import os
import random

from absl import app
from absl import flags
import gin

from albert.experiments import synthetic_squad
from albert.finetuning import training as finetuning
from albert.pretraining_data import sample_corpus
from albert.pretraining_data.sentencepiece_trainer import train_sentencepiece
from albert.text.tokenization import SentencePieceTokenizer

# The test suite's sample corpus and SentencePiece model (tests/conftest.py).
SAMPLE_BYTES = 400_000
VOCAB_SIZE = 2000

WORK_DIR = flags.DEFINE_string("work_dir", None, "Where runs go.")
SEEDS = flags.DEFINE_list("seeds", ["1", "2"], "Seeds (TrainerConfig.seed).")
STEPS = flags.DEFINE_integer("steps", 1000, "Training steps per run.")


def main(argv):
  del argv
  work = WORK_DIR.value
  os.makedirs(work, exist_ok=True)
  spm = os.path.join(work, "spm.model")
  if not os.path.exists(spm):
    corpus = os.path.join(work, "sample_corpus.txt")
    sample_corpus.write_sample_corpus(corpus, max_bytes=SAMPLE_BYTES)
    train_sentencepiece(
        input_file=corpus,
        model_prefix=os.path.join(work, "spm"),
        vocab_size=VOCAB_SIZE,
        num_threads=1,
    )
  tokenizer = SentencePieceTokenizer.from_file(spm, lower=True)
  rng = random.Random(7)
  markers, words = synthetic_squad.markers_and_words(tokenizer, 40)
  data_dir = os.path.join(work, "data")
  os.makedirs(data_dir, exist_ok=True)
  synthetic_squad.write_squad(
      os.path.join(data_dir, "train-v1.1.json"),
      rng,
      words,
      markers,
      1200,
      "1.1",
  )
  synthetic_squad.write_squad(
      os.path.join(data_dir, "dev-v1.1.json"), rng, words, markers, 120, "1.1"
  )
  results = {}
  for mask in (True, False):
    for seed in SEEDS.value:
      gin.clear_config()
      name = f"mask_{mask}_seed_{seed}"
      got = finetuning.run(
          mode="train_and_eval",
          model_dir=os.path.join(work, name),
          gin_file=["gin/finetune/squad_v1.gin"],
          gin_param=synthetic_squad.gin_params("1.1", STEPS.value)
          + [
              f"SquadTask.context_mask = {mask}",
              f"TrainerConfig.seed = {seed}",
          ],
          data_dir=data_dir,
          spm_model_file=spm,
      )
      results[name] = {
          "exact_match": got["dev/exact_match"],
          "f1": got["dev/f1"],
      }
      print(name, json.dumps(results[name]), flush=True)
  with open(os.path.join(work, "results.json"), "w") as f:
    json.dump(results, f, indent=2)


if __name__ == "__main__":
  flags.mark_flag_as_required("work_dir")
  app.run(main)
