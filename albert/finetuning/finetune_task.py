"""`FinetuneTask`: what every fine-tuning task (GLUE, SQuAD, RACE) shares.

A task reads its files as users download them, converts examples into
fixed-shape features, trains a head on the encoder with the generic
`official.core.trainer`, and turns the outputs into the official metrics,
prediction files and a raw-text serving SavedModel.

Subclasses set `name` and the split tuples and implement the abstract hooks
(read_examples, featurize, feature_spec, build_task_model, the loss,
evaluate_outputs, write_predictions, serving_module). The base class
provides the tokenizer, the cached training records (`feature_cache.py`),
the training input pipeline, and ordered prediction over a split.
"""

import abc
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from absl import logging
import numpy as np
import tensorflow as tf

from albert import model_dir as model_dir_lib
from albert.modeling.config import AlbertConfig
from albert.serving.preprocessor import Preprocessor
from albert.serving.wordpiece_preprocessor import make_preprocessor
from albert.text import tokenizers
from albert.text.tokenizers import Tokenizer
from albert.finetuning import feature_cache
from albert.finetuning.packing import pack_segments
from albert.finetuning import task_model
from albert.finetuning.task_state import TaskState
from official.core.task import Task
from official.distribute.replicated import Replicated
from official.io import files

Outputs = Dict[str, np.ndarray]


class FinetuneTask(Task, abc.ABC):
  """Base class of fine-tuning tasks.

  Args:
    data_dir: the task's files, in the layout its download has.
    spm_model_file: the SentencePiece model used in pretraining.
    vocab_file: without `spm_model_file`, the WordPiece vocab.txt used in
      pretraining (the Chinese ALBERTs), as the original chooses.
    do_lower_case: lower-case text before tokenizing (as pretraining did).
    seq_length: packed input length (`max_seq_length` of the original).
    global_batch_size: examples per optimizer step over all replicas.
    eval_batch_size: examples per prediction batch.
    dropout_rate: dropout on the head's input (0.1 in the original; 0 for
      RACE v2).
    shuffle_buffer_size: training examples in the shuffle buffer.
    seed: training stream shuffle seed.
    cache_dir: where converted training features are kept (default
      `DATA_DIR/cache`).
    model_config: the encoder architecture; None: `task_model.encoder_config`
      (`described_by`'s record, the fields gin binds replaced).
    init_checkpoint: the pretrained (or converted) checkpoint, a prefix or a
      model directory, whose encoder a new run starts from
      (`warm_start.load_encoder_weights`); the heads start fresh. None: a
      randomly initialised encoder. Without `spm_model_file` and
      `vocab_file`, its model directory's tokenizer file (a fetched or
      converted release's) is the task's.
    described_by: the model directory whose records (model_config.json,
      the tokenizer file) fill in what neither gin nor the flags give;
      default `init_checkpoint`'s (eval, predict and export pass the
      fine-tuned model directory itself).
    freeze_encoder: train the head alone on fixed features
      (`task_model.freeze_encoder`).
  """

  name: str = ""
  # The metric (of the first eval split) that picks the best checkpoint.
  main_metric: str = "accuracy"
  train_split: str = "train"
  eval_splits: Tuple[str, ...] = ("dev",)
  predict_splits: Tuple[str, ...] = ("test",)

  def __init__(
      self,
      *,
      data_dir: Optional[str] = None,
      spm_model_file: Optional[str] = None,
      vocab_file: Optional[str] = None,
      do_lower_case: bool = True,
      seq_length: int = 512,
      global_batch_size: int = 32,
      eval_batch_size: int = 32,
      dropout_rate: float = 0.1,
      shuffle_buffer_size: int = 10000,
      seed: int = 12345,
      cache_dir: Optional[str] = None,
      model_config: Optional[AlbertConfig] = None,
      init_checkpoint: Optional[str] = None,
      described_by: Optional[str] = None,
      freeze_encoder: bool = False,
  ):
    cls = type(self).__name__
    for arg, value in (
        ("seq_length", seq_length),
        ("global_batch_size", global_batch_size),
        ("eval_batch_size", eval_batch_size),
        ("shuffle_buffer_size", shuffle_buffer_size),
    ):
      if value <= 0:
        raise ValueError(f"{cls}.{arg}={value} must be > 0")
    if not 0.0 <= dropout_rate < 1.0:
      raise ValueError(f"{cls}.dropout_rate={dropout_rate} must be in [0, 1)")
    described_by = described_by or init_checkpoint
    # Looked up when first needed, not here: a run refuses what its strategy
    # cannot reach (strategy_lib.check_setup) before touching any path.
    self._tokenizer_source = (
        None if spm_model_file or vocab_file else described_by
    )
    self.config = model_config or task_model.encoder_config(described_by)
    if seq_length > self.config.max_position_embeddings:
      raise ValueError(
          f"{cls}.seq_length={seq_length} exceeds AlbertConfig."
          "max_position_embeddings="
          f"{self.config.max_position_embeddings}"
      )
    self.data_dir = data_dir
    self.init_checkpoint = init_checkpoint
    self.freeze_encoder = freeze_encoder
    self._spm_model_file = spm_model_file
    self._vocab_file = vocab_file
    self.do_lower_case = do_lower_case
    self.seq_length = seq_length
    self.global_batch_size = global_batch_size
    self.eval_batch_size = eval_batch_size
    self.dropout_rate = dropout_rate
    self.shuffle_buffer_size = shuffle_buffer_size
    self.seed = seed
    self.cache_dir = cache_dir or (
        os.path.join(data_dir, "cache") if data_dir else None
    )
    self._tokenizer = None
    self._train_records = None  # (path, count) once converted
    self.num_train_examples = None  # examples (not features) once read
    self._split_features = {}  # split -> (examples, features, arrays)
    self._default_runner = Replicated()

  def count_training_labels(self, examples: Sequence[Any]) -> None:
    """Hook: the training examples, before their features (class weights)."""
    del examples

  def build_model(self):
    """`build_task_model`'s model, its encoder frozen with
    `freeze_encoder`."""
    model = self.build_task_model()
    if self.freeze_encoder:
      task_model.freeze_encoder(model, type(self).__name__)
    return model

  @abc.abstractmethod
  def build_task_model(self):
    """The task's model (an `EncoderWithHeads`), built."""

  def initialize(self, model, optimizer) -> Optional[str]:
    """The encoder of `init_checkpoint` (the trainer calls this when the
    model directory has no checkpoint yet)."""
    del optimizer  # fine-tuning starts its optimizer afresh
    return task_model.warm_start(model, self.init_checkpoint, self.config)

  # --- Hooks ------------------------------------------------------------------

  @abc.abstractmethod
  def read_examples(self, split: str) -> Sequence[Any]:
    """The examples of `split`, read from `data_dir`; one-line errors."""

  @abc.abstractmethod
  def featurize(
      self, examples: Sequence[Any], *, training: bool
  ) -> Iterable[Dict[str, Any]]:
    """Feature dicts (one or more per example) with every `feature_spec` key."""

  @abc.abstractmethod
  def feature_spec(self) -> Dict[str, tf.TensorSpec]:
    """Model inputs and labels of one feature: name -> shape and dtype."""

  def prediction_spec(self) -> Dict[str, tf.TensorSpec]:
    """The spec of `featurize(training=False)`'s features (an embedder
    predicts on single texts, not on training rows)."""
    return self.feature_spec()

  def feature_options(self) -> Dict[str, Any]:
    """Task options that change the features (part of the cache key)."""
    return {}

  @abc.abstractmethod
  def evaluate_outputs(
      self,
      split: str,
      examples: Sequence[Any],
      features: Sequence[Dict[str, Any]],
      outputs: Outputs,
  ) -> Dict[str, float]:
    """The official metrics of `split` from the model's outputs."""

  @abc.abstractmethod
  def write_predictions(
      self,
      split: str,
      examples: Sequence[Any],
      features: Sequence[Dict[str, Any]],
      outputs: Outputs,
      output_dir: str,
  ) -> List[str]:
    """Writes the split's prediction files (atomically); returns their paths."""

  @abc.abstractmethod
  def serving_module(self, model, preprocessor: Preprocessor) -> tf.Module:
    """A module with `signatures()` answering raw-text requests."""

  def saved_facts(self) -> Optional[Dict[str, Any]]:
    """What eval, predict and export need to know besides the weights, kept
    in MODEL_DIR/labels.json with the first checkpoint (e.g. own data's
    label set); None: the task keeps none (its recipe fixes its model)."""
    return None

  def embedding_settings(self) -> Optional[Dict[str, Any]]:
    """An embedder's settings (MODEL_DIR/embedding.json); None otherwise."""
    return None

  def use_state(self, state: TaskState) -> None:
    """Takes what MODEL_DIR knows (`task_state.TaskState`): the saved facts,
    the dev evaluation's choices (a threshold, for predictions and export),
    and, before a model is built without training, fails in one line if
    something the model's shape depends on is unknown."""
    del state  # a fixed task knows its model and chooses nothing on dev

  # --- Provided ---------------------------------------------------------------

  @property
  def selection_key(self) -> str:
    """What selects the best checkpoint and seed: `<eval split>/<metric>`."""
    return f"{self.eval_splits[0]}/{self.main_metric}"

  def _tokenizer_files(self) -> Tuple[Optional[str], Optional[str]]:
    """(spm_model_file, vocab_file): the given ones, else the tokenizer file
    the describing model directory carries (looked up once)."""
    if self._tokenizer_source is not None:
      source, self._tokenizer_source = self._tokenizer_source, None
      self._spm_model_file, self._vocab_file = model_dir_lib.tokenizer_files(
          model_dir_lib.split_checkpoint(source)[0]
      )
    return self._spm_model_file, self._vocab_file

  @property
  def spm_model_file(self) -> Optional[str]:
    return self._tokenizer_files()[0]

  @property
  def vocab_file(self) -> Optional[str]:
    return self._tokenizer_files()[1]

  @property
  def tokenizer_file(self) -> str:
    """The SentencePiece model, else the WordPiece vocabulary."""
    return self.spm_model_file or self.vocab_file

  @property
  def tokenizer(self) -> Tokenizer:
    """The Python tokenizer (what the data tool used)."""
    if self._tokenizer is None:
      if not self.tokenizer_file:
        raise ValueError(
            f"{self.name}: --spm_model_file (the SentencePiece model of "
            "pretraining) or --vocab_file (its WordPiece vocab.txt) is "
            "required"
        )
      self._tokenizer = tokenizers.load(
          self.spm_model_file, self.vocab_file, lower=self.do_lower_case
      )
      if self._tokenizer.vocab_size != self.config.vocab_size:
        raise ValueError(
            f"{self.tokenizer_file} has {self._tokenizer.vocab_size} entries "
            f"but AlbertConfig.vocab_size is {self.config.vocab_size}; "
            "pass the vocabulary the checkpoint was pretrained with"
        )
    return self._tokenizer

  def preprocessor(self) -> Preprocessor:
    """The in-graph tokenizer for serving (same normalisation and pieces)."""
    _ = self.tokenizer  # checks that the model is given and fits the vocabulary
    return make_preprocessor(
        spm_model_file=self.spm_model_file,
        vocab_file=self.vocab_file,
        seq_length=self.seq_length,
        do_lower_case=self.do_lower_case,
    )

  def pack(
      self, first: Sequence[int], second: Optional[Sequence[int]] = None
  ) -> Dict[str, np.ndarray]:
    """int32 [seq_length] `input_word_ids`, `input_mask`, `input_type_ids`
    of [CLS] first [SEP] (second [SEP]), padded (segments already trimmed)."""
    return pack_segments(
        first,
        second,
        cls_id=self.tokenizer.cls_id,
        sep_id=self.tokenizer.sep_id,
        seq_length=self.seq_length,
    )

  def _require_data_dir(self) -> str:
    if not self.data_dir:
      raise ValueError(
          f"{self.name}: --data_dir is required (the task's "
          "downloaded files)"
      )
    if not files.isdir(self.data_dir):
      raise ValueError(
          f"{self.name}: data_dir {self.data_dir} is not a directory"
      )
    return self.data_dir

  def prepare_training_data(self) -> int:
    """Converts (or finds cached) training features; returns their count.

    Also sets `num_train_examples` (SQuAD: questions, each 1+ features)."""
    if self._train_records is None:
      self._require_data_dir()
      _ = self.tokenizer  # fail early on a missing model or wrong vocabulary
      examples = self.read_examples(self.train_split)
      self.num_train_examples = len(examples)
      self.count_training_labels(examples)
      key = {
          "task": self.name,
          "split": self.train_split,
          "spm_sha256": files.file_sha256(self.tokenizer_file),
          "do_lower_case": self.do_lower_case,
          "seq_length": self.seq_length,
          "options": self.feature_options(),
      }
      self._train_records = feature_cache.cached_features(
          self.cache_dir,
          f"{self.name}-{self.train_split}-seq{self.seq_length}",
          feature_cache.cache_digest(key, examples),
          lambda: self.featurize(examples, training=True),
          self.feature_spec(),
          total=len(examples),
      )
      if not self._train_records[1]:
        raise ValueError(
            f"{self.name}: the {self.train_split} split of "
            f"{self.data_dir} gave no training features"
        )
    return self._train_records[1]

  @property
  def epoch_size(self) -> int:
    """What an epoch reads (after `prepare_training_data`): the examples
    (SQuAD: questions, as the original counts; windows: `long_text.py`)."""
    return self.num_train_examples

  def build_inputs(
      self, input_context, *, training, batch_size, skip_examples=0
  ):
    if not training:
      raise ValueError(
          f"{self.name}: evaluation runs through predict(), "
          "over whole splits"
      )
    path, _ = self._train_records or (None, None)
    if path is None:
      raise ValueError("prepare_training_data() must run before training")
    return feature_cache.record_dataset(
        path,
        self.feature_spec(),
        batch_size=batch_size,
        training=True,
        input_context=input_context,
        seed=self.seed,
        skip_examples=skip_examples,
        shuffle_buffer_size=self.shuffle_buffer_size,
    )

  def model_config_dict(self) -> Dict[str, Any]:
    return self.config.to_dict()

  def predict(
      self, model, split: str, runner: Optional[Replicated] = None
  ) -> Tuple[Sequence[Any], List[Dict[str, Any]], Outputs]:
    """Runs `model` over a whole split in order, on every replica of
    `runner`'s strategy (default: one device), in batches of
    `eval_batch_size` of a static shape (the last one padded).

    Returns:
      (examples, features, outputs): outputs[name][i] belongs to features[i].
    """
    if split not in self._split_features:  # converted once per split
      self._require_data_dir()
      examples = self.read_examples(split)
      features = list(self.featurize(examples, training=False))
      if not features:
        raise ValueError(
            f"{self.name}: the {split} split of {self.data_dir} "
            "holds no examples"
        )
      self._split_features[split] = (
          examples,
          features,
          feature_cache.stack_features(features, self.prediction_spec()),
      )
    examples, features, arrays = self._split_features[split]
    runner = runner or self._default_runner
    logging.info("%s %s:", self.name, split)
    outputs = runner.predict(  # traced once per model, for every split
        model,
        lambda batch: model(batch, training=False),
        arrays,
        self.eval_batch_size,
    )
    return examples, features, outputs

  def evaluate(
      self,
      model,
      splits: Optional[Sequence[str]] = None,
      runner: Optional[Replicated] = None,
  ) -> Dict[str, float]:
    """Official metrics of every eval split, keyed `split/metric`."""
    results = {}
    for split in splits or self.eval_splits:
      metrics = self.evaluate_outputs(
          split, *self.predict(model, split, runner)
      )
      results.update({f"{split}/{k}": float(v) for k, v in metrics.items()})
      logging.info(
          "%s %s: %s",
          self.name,
          split,
          " | ".join(f"{k} {v:.4f}" for k, v in sorted(metrics.items())),
      )
    return results

  def predict_to_files(
      self, model, output_dir: str, runner: Optional[Replicated] = None
  ) -> List[str]:
    """Writes the prediction files of every predict split into `output_dir`."""
    files.makedirs(output_dir)
    paths = []
    for split in self.predict_splits:
      paths += self.write_predictions(
          split, *self.predict(model, split, runner), output_dir
      )
    return paths
