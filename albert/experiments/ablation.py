"""The paper's ablations at CPU scale (`tools/run_ablation.py`).

One call runs one experiment end to end in `work_dir`:
1. data: the corpus split by document into training and held-out text (every
   `heldout_every`-th document is held out), one SentencePiece model trained
   on the training text, pretraining TFRecords of the training text for each
   sentence task the experiment needs, and two held-out evaluation sets made
   from the held-out documents: SOP-style (in order / swapped) and NSP-style
   (in order / random document);
2. training: every variant with `python -m albert.run_pretraining`, the same
   gin files, steps and batch, evaluated on the held-out SOP set during
   training (the curves);
3. evaluation: every variant's final checkpoint on both held-out sets
   (`--mode=eval`): masked-LM accuracy, NSP accuracy, SOP accuracy (paper
   Table 5's columns);
4. report: `results.json`, `results.md` (Table 5 or Table 4 layout, with
   parameter counts) and PNG plots of the held-out curves read from the
   TensorBoard event files.

Every step writes its output under a temporary name and renames it when
complete, and is skipped when its output exists: a rerun after a crash, or
with a larger `--train_steps` (training resumes), finishes the job.
"""

import concurrent.futures
import dataclasses
import json
import math
import os
import subprocess
import sys
import time
from typing import Dict, List, Optional, Sequence

from absl import logging

from albert.experiments import curves
from albert.experiments.report import plot_curves
from albert.experiments.report import results_table
from albert.experiments.split_corpus import split_corpus
from albert.experiments.variants import CURVE_METRICS
from albert.experiments.variants import EVAL_SETS
from albert.experiments.variants import EXPERIMENTS
from albert.experiments.variants import Variant
from albert.modeling.config import AlbertConfig
from albert.modeling.parameter_counts import parameter_counts
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.pipeline import create_pretraining_data
from albert.pretraining_data.sentencepiece_trainer import train_sentencepiece
from albert.text.tokenization import SentencePieceTokenizer
from official.core.host import available_cores
from official.errors import CommandError
from official.errors import InputError
from official.io import atomic_write


@dataclasses.dataclass
class Ablation:
  """One experiment in `work_dir`; see the module docstring."""

  experiment: str
  corpus: str
  work_dir: str
  train_steps: int = 3000
  gin_files: Sequence[str] = ("gin/tiny.gin", "gin/demo.gin")
  gin_params: Sequence[str] = ()
  vocab_size: int = 8000
  seq_length: int = 128
  # None: every masked position fits, ceil(masked_lm_prob x seq_length).
  max_predictions_per_seq: Optional[int] = None
  dupe_factor: int = 5
  heldout_every: int = 20
  eval_steps: int = 50
  eval_points: int = 10
  num_workers: Optional[int] = None
  parallel: int = 1

  def __post_init__(self):
    if self.experiment not in EXPERIMENTS:
      raise InputError(
          f"experiment={self.experiment!r} is not one of "
          f"{', '.join(EXPERIMENTS)}"
      )
    if not os.path.isfile(self.corpus):
      raise InputError(f"corpus {self.corpus} does not exist")
    if self.max_predictions_per_seq is None:
      self.max_predictions_per_seq = math.ceil(
          PretrainingDataConfig.masked_lm_prob * self.seq_length
      )
    for name in (
        "train_steps",
        "vocab_size",
        "eval_steps",
        "heldout_every",
        "parallel",
    ):
      if getattr(self, name) < 1:
        raise InputError(f"{name}={getattr(self, name)} must be >= 1")
    self.variants = EXPERIMENTS[self.experiment]
    self.data_dir = os.path.join(self.work_dir, "data")
    self.models_dir = os.path.join(self.work_dir, self.experiment)

  # --- Data -------------------------------------------------------------

  def _records(self, name: str) -> str:
    return os.path.join(self.data_dir, name)

  def prepare_data(self) -> None:
    os.makedirs(self.data_dir, exist_ok=True)
    train_txt = os.path.join(self.data_dir, "train.txt")
    heldout_txt = os.path.join(self.data_dir, "heldout.txt")
    if not os.path.exists(heldout_txt):
      counts = split_corpus(
          self.corpus, train_txt, heldout_txt, self.heldout_every
      )
      logging.info(
          "Corpus: %d training and %d held-out documents",
          counts["train"],
          counts["heldout"],
      )
    self.spm_model = os.path.join(self.data_dir, "spm.model")
    if not os.path.exists(self.spm_model):
      train_sentencepiece(
          input_file=train_txt,
          model_prefix=os.path.join(self.data_dir, "spm"),
          vocab_size=self.vocab_size,
          hard_vocab_limit=False,
      )
    # The pieces the model has (at most vocab_size: hard_vocab_limit=False).
    self.pieces = SentencePieceTokenizer.from_file(
        self.spm_model, True
    ).vocab_size
    jobs = [
        (f"train_{task}", train_txt, task, self.dupe_factor)
        for task in sorted({v.sentence_task for v in self.variants})
    ] + [(f"eval_{task}", heldout_txt, task, 1) for task in EVAL_SETS]
    for name, text, task, dupe in jobs:
      config = PretrainingDataConfig(
          max_seq_length=self.seq_length,
          max_predictions_per_seq=self.max_predictions_per_seq,
          dupe_factor=dupe,
          sentence_task=task,
          # Pure sentence-order pairs (ours; the original mixes NSP-style
          # negatives into SOP), as docs/experiments.md measured them.
          single_segment="random_document" if task == "nsp" else "split",
          block_bytes=1 << 20,
      )
      create_pretraining_data(
          input_file=text,
          output_file=os.path.join(self._records(name), "data.tfrecord"),
          spm_model_file=self.spm_model,
          config=config,
          num_output_shards=2 if name.startswith("train") else 1,
          num_workers=self.num_workers,
      )

  # --- Training and evaluation ------------------------------------------

  def model_dir(self, variant: Variant) -> str:
    return os.path.join(self.models_dir, variant.name)

  def _command(
      self,
      variant: Variant,
      *extra: str,
      task: str,
      data: str,
      eval_set: str = "sop",
  ):
    params = [
        f"AlbertConfig.vocab_size={self.pieces}",
        f"PretrainTask.seq_length={self.seq_length}",
        f"PretrainTask.max_predictions_per_seq={self.max_predictions_per_seq}",
        f"PretrainTask.sentence_task='{task}'",
        f"PretrainTask.train_file_pattern='{self._records(data)}/*.tfrecord'",
        "PretrainTask.eval_file_pattern="
        f"'{self._records('eval_' + eval_set)}/*.tfrecord'",
        f"TRAIN_STEPS={self.train_steps}",
        f"OptimizerConfig.warmup_steps={self.train_steps // 10}",
        "TrainerConfig.eval_interval="
        f"{max(1, self.train_steps // self.eval_points)}",
        f"TrainerConfig.eval_steps={self.eval_steps}",
        *variant.gin_params,
        *self.gin_params,
    ]
    return (
        [sys.executable, "-m", "albert.run_pretraining"]
        + [f"--gin_file={g}" for g in self.gin_files]
        + [f"--gin_param={p}" for p in params]
        + [f"--model_dir={self.model_dir(variant)}", *extra]
    )

  def _run(self, command: List[str], what: str) -> float:
    logging.info("%s: %s", what, " ".join(command))
    start = time.time()
    env = None
    if self.parallel > 1:
      # Runs side by side share the cores: one thread each for the products
      # (TensorFlow splits this model's small products poorly anyway).
      threads = max(1, available_cores() // self.parallel)
      env = dict(os.environ, TF_NUM_INTRAOP_THREADS=str(threads))
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode:
      tail = (result.stderr or result.stdout).strip().splitlines()[-1:]
      raise CommandError(f"{what} failed: {' '.join(tail)}")
    return time.time() - start

  def train(self, variant: Variant) -> None:
    done = os.path.join(self.model_dir(variant), "train_metrics.json")
    if os.path.exists(done):
      return
    seconds = self._run(
        self._command(
            variant,
            f"--metrics_file={done}.tmp",
            task=variant.sentence_task,
            data=f"train_{variant.sentence_task}",
        ),
        f"train {self.experiment}/{variant.name}",
    )
    with open(f"{done}.tmp", encoding="utf-8") as f:
      record = json.load(f)
    record["seconds"] = seconds
    atomic_write.write_atomic(done, json.dumps(record, indent=2) + "\n")
    os.remove(f"{done}.tmp")

  def evaluate(self, variant: Variant, eval_set: str) -> Dict[str, float]:
    path = os.path.join(self.model_dir(variant), f"eval_{eval_set}.json")
    if not os.path.exists(path):
      command = self._command(
          variant,
          "--mode=eval",
          f"--eval_name=eval_{eval_set}",
          f"--metrics_file={path}",
          task=eval_set,  # The 2-way head is read even if never trained.
          data=f"train_{variant.sentence_task}",
          eval_set=eval_set,
      )
      self._run(command, f"evaluate {variant.name} on {eval_set}")
    with open(path, encoding="utf-8") as f:
      return json.load(f)["metrics"]

  # --- Report -----------------------------------------------------------

  def parameters(self, variant: Variant) -> int:
    with open(
        os.path.join(self.model_dir(variant), "model_config.json"),
        encoding="utf-8",
    ) as f:
      config = AlbertConfig.explicit(**json.load(f))
    return parameter_counts(config)["backbone_params"]

  def curves(self, variant: Variant) -> Dict[str, List]:
    """Held-out curves from the TensorBoard event files: metric -> [(step,
    value)]."""
    return curves.read_scalars(
        os.path.join(self.model_dir(variant), "eval"), CURVE_METRICS
    )

  def _each(self, fn, jobs) -> None:
    """fn(job) for every job, `parallel` at a time; the first error raises
    once every started job has ended."""
    if self.parallel == 1:
      for job in jobs:
        fn(job)
      return
    with concurrent.futures.ThreadPoolExecutor(self.parallel) as pool:
      for future in [pool.submit(fn, job) for job in jobs]:
        future.result()

  def run(self) -> Dict:
    """Runs every missing step; returns the results (also written)."""
    self.prepare_data()
    results = {
        "experiment": self.experiment,
        "train_steps": self.train_steps,
        "gin_files": list(self.gin_files),
        "gin_params": list(self.gin_params),
        "seq_length": self.seq_length,
        "variants": {},
    }
    self._each(self.train, self.variants)
    self._each(
        lambda job: self.evaluate(*job),
        [(v, s) for v in self.variants for s in EVAL_SETS],
    )
    for variant in self.variants:
      with open(
          os.path.join(self.model_dir(variant), "train_metrics.json"),
          encoding="utf-8",
      ) as f:
        trained = json.load(f)
      results["variants"][variant.name] = {
          "label": variant.label,
          "sentence_task": variant.sentence_task,
          "gin_params": list(variant.gin_params),
          "backbone_params": self.parameters(variant),
          "train_seconds": trained["seconds"],
          "checkpoint": os.path.relpath(trained["checkpoint"], self.work_dir),
          "eval": {s: self.evaluate(variant, s) for s in EVAL_SETS},
          "curves": self.curves(variant),
      }
    self._write_report(results)
    return results

  def _write_report(self, results: Dict) -> None:
    os.makedirs(self.models_dir, exist_ok=True)
    atomic_write.write_atomic(
        os.path.join(self.models_dir, "results.json"),
        json.dumps(results, indent=2) + "\n",
    )
    atomic_write.write_atomic(
        os.path.join(self.models_dir, "results.md"), results_table(results)
    )
    plot_curves(results, self.models_dir)
