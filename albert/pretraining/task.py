"""`PretrainTask`: masked-LM + sentence-order pretraining (paper section 3)."""

from typing import Dict, List, Optional

from absl import logging
import gin
import tensorflow as tf
import tf_keras

from albert.pretraining import data
from albert.pretraining import documents_data
from albert import warm_start
from albert.modeling.config import AlbertConfig
from albert.modeling.pretrainer import AlbertPretrainer
from albert.pretraining_data import dynamic_masking
from albert.pretraining_data.data_config import OUTPUT_FORMATS
from official.errors import DamagedFileError
from official.errors import InputError
from official.core import input_pipeline
from official.core.task import Task
from official.modeling import fusion

SENTENCE_TASKS = ("sop", "nsp", "none")
# The formats create_pretraining_data writes.
INPUT_FORMATS = OUTPUT_FORMATS
# Added to the masked-LM weight total, as in the original loss.
MLM_EPSILON = 1e-5


@gin.configurable
class PretrainTask(Task):
  """ALBERT pretraining on TFRecords in the original schema.

  Loss (original `run_pretraining.py`, `get_masked_lm_output`): sum(w * nll) /
  (sum(w) + 1e-5) over the masked positions of the global batch, plus the mean
  sentence-order cross-entropy (left out when `sentence_task` is `none`). NSP
  data uses the same 2-way head.

  Args:
    train_file_pattern: comma-separated globs of training TFRecords (required).
    eval_file_pattern: held-out TFRecords for evaluation (optional).
    global_batch_size: examples per optimizer step over all replicas and
      accumulation steps (4096 in the paper).
    seq_length: the data's max_seq_length.
    max_predictions_per_seq: the data's max_predictions_per_seq.
    sentence_task: `sop` (default), `nsp` or `none` (paper Table 5 ablation).
    shuffle_buffer_size: the examples format: records shuffled together (a
      window; see albert/pretraining/data.py).
    documents_per_window: the documents format: documents paired at once,
      whose pairs are shuffled together (albert/pretraining/documents_data.py).
    cycle_length: training files read interleaved (default: min(cores,
      files)); see albert/pretraining/data.py on order and resume.
    seed: input-pipeline shuffle seed.
    model_config: the architecture; `AlbertConfig()` (gin-bound) when None.
    init_checkpoint: continued pretraining: a checkpoint (prefix or model
      directory: its latest) whose weights, and optimizer moments when it
      has them, a new run starts from (`warm_start.init_pretrainer`); ours,
      or one converted from an original TF1 or Hugging Face checkpoint.
    init_from_group0: with `init_checkpoint`, blocks the checkpoint lacks
      start from its block 0 (the original's `--init_from_group0`).
    init_optimizer_slots: with `init_checkpoint`, also restore its optimizer
      moments (LAMB's m and v) where they line up; False (the original's):
      weights only, the optimizer starts afresh.
    input_format: "examples" (masked records, the original's; default) or
      "documents" (`create_pretraining_data --output_format=documents`:
      paired and masked as read, `albert/pretraining/documents_data.py`).
    eval_input_format: the format of `eval_file_pattern` (default:
      `input_format`); e.g. documents for training and fixed examples for a
      held-out set that runs compare on.
    dynamic_masking_seed: the documents format: None (default) draws new
      pairs and masks every epoch from `seed` and the epoch; an int pins
      them: the same every epoch.
  """

  def __init__(
      self,
      *,
      train_file_pattern: Optional[str] = None,
      eval_file_pattern: Optional[str] = None,
      global_batch_size: int = 4096,
      seq_length: int = 512,
      max_predictions_per_seq: int = 20,
      sentence_task: str = "sop",
      shuffle_buffer_size: int = 10000,
      documents_per_window: int = documents_data.DOCUMENTS_PER_WINDOW,
      cycle_length: Optional[int] = None,
      seed: int = 12345,
      model_config: Optional[AlbertConfig] = None,
      init_checkpoint: Optional[str] = None,
      init_from_group0: bool = False,
      init_optimizer_slots: bool = False,
      input_format: str = "examples",
      eval_input_format: Optional[str] = None,
      dynamic_masking_seed: Optional[int] = None,
  ):
    eval_input_format = eval_input_format or input_format
    for name, value in (
        ("input_format", input_format),
        ("eval_input_format", eval_input_format),
    ):
      if value not in INPUT_FORMATS:
        raise ValueError(
            f"PretrainTask.{name}={value!r} is not one of {INPUT_FORMATS}"
        )
    if dynamic_masking_seed is not None and "documents" not in (
        input_format,
        eval_input_format,
    ):
      raise ValueError(
          "PretrainTask.dynamic_masking_seed applies to "
          "PretrainTask.input_format='documents' only"
      )
    if sentence_task not in SENTENCE_TASKS:
      raise ValueError(
          f"PretrainTask.sentence_task={sentence_task!r} is not "
          f"one of {SENTENCE_TASKS}"
      )
    for name, value in (
        ("global_batch_size", global_batch_size),
        ("seq_length", seq_length),
        ("max_predictions_per_seq", max_predictions_per_seq),
        ("shuffle_buffer_size", shuffle_buffer_size),
        ("documents_per_window", documents_per_window),
        ("cycle_length", 1 if cycle_length is None else cycle_length),
    ):
      if value <= 0:
        raise ValueError(f"PretrainTask.{name}={value} must be > 0")
    self.train_file_pattern = train_file_pattern
    self.eval_file_pattern = eval_file_pattern
    self.global_batch_size = global_batch_size
    self.seq_length = seq_length
    self.max_predictions_per_seq = max_predictions_per_seq
    self.sentence_task = sentence_task
    self.shuffle_buffer_size = shuffle_buffer_size
    self.documents_per_window = documents_per_window
    self.cycle_length = cycle_length
    self.seed = seed
    self.init_checkpoint = init_checkpoint
    self.init_from_group0 = init_from_group0
    self.init_optimizer_slots = init_optimizer_slots
    self.input_format = input_format
    self.eval_input_format = eval_input_format
    self.dynamic_masking_seed = dynamic_masking_seed
    for name, value in (
        ("init_from_group0", init_from_group0),
        ("init_optimizer_slots", init_optimizer_slots),
    ):
      if value and not init_checkpoint:
        raise ValueError(
            f"PretrainTask.{name} needs PretrainTask.init_checkpoint"
        )
    self.config = model_config or AlbertConfig()
    if seq_length > self.config.max_position_embeddings:
      raise ValueError(
          f"PretrainTask.seq_length={seq_length} exceeds "
          f"AlbertConfig.max_position_embeddings="
          f"{self.config.max_position_embeddings}"
      )

  def validate_data(self) -> None:
    """Fails early, in one line, on missing files or records of other shapes."""
    if not self.train_file_pattern:
      raise ValueError(
          "PretrainTask.train_file_pattern is required: set it "
          'with --gin_param="PretrainTask.train_file_pattern='
          "'data/*.tfrecord'\""
      )
    for name in ("train_file_pattern", "eval_file_pattern"):
      pattern = getattr(self, name)
      if not pattern:
        continue
      what = f"PretrainTask.{name}"
      if self._format(name == "train_file_pattern") == "documents":
        source = documents_data.read_documents_data(pattern, what)
        documents_data.check_first_record(source.files, source.compression)
        config = source.config(
            self.seq_length, self.max_predictions_per_seq, self.sentence_task
        )
        if config.uses_random_documents:
          source.pool()  # One line now if there is none.
      else:
        data.match_files(pattern, what=what)
        data.check_record_shapes(
            pattern, self.seq_length, self.max_predictions_per_seq
        )
      self._check_vocabulary(name, pattern)
      data.check_shard_sizes(pattern)

  def _format(self, training: bool) -> str:
    return self.input_format if training else self.eval_input_format

  def _check_vocabulary(self, name: str, pattern: str) -> None:
    """The data's SentencePiece size (manifest.json) against the model's."""
    model_size = self.config.vocab_size
    for manifest, data_size, what in data.manifest_vocab_sizes(pattern):
      if data_size > model_size:
        raise InputError(
            f"{manifest}: the data was made with {data_size} {what} but "
            f"AlbertConfig.vocab_size={model_size}: set "
            f"AlbertConfig.vocab_size={data_size} or make the data with the "
            "model's vocabulary"
        )
      if data_size < model_size:
        logging.warning(
            "%s: the data was made with %d %s but "
            "AlbertConfig.vocab_size=%d: %d embedding rows will never be "
            "trained; was the data made with another vocabulary? "
            "(PretrainTask.%s)",
            manifest,
            data_size,
            what,
            model_size,
            model_size - data_size,
            name,
        )

  def explain_data_error(self, error: BaseException) -> None:
    """After `error` from a training or evaluation step: raises an
    InputError that names the file and what to do, when the data is the
    cause; else returns.

    Only a DataLossError (a truncated or corrupt record) or an Example that
    does not parse makes it read the data again, in full, to find the record.
    """
    if data.TOKEN_ID_ERROR in str(error):
      raise InputError(
          f"PretrainTask data ({self.train_file_pattern}"
          + (f", {self.eval_file_pattern}" if self.eval_file_pattern else "")
          + f") holds a token id >= AlbertConfig.vocab_size="
          f"{self.config.vocab_size}: make the data with the model's "
          "SentencePiece model or raise AlbertConfig.vocab_size"
      ) from error
    if dynamic_masking.SHORT_DOCUMENT_ERROR in str(error):
      detail = str(error).split(dynamic_masking.SHORT_DOCUMENT_ERROR)[1]
      raise InputError(
          f"PretrainTask data ({self.train_file_pattern}): a "
          f"{dynamic_masking.SHORT_DOCUMENT_ERROR}{detail.splitlines()[0]}"
      ) from error
    if not isinstance(error, tf.errors.DataLossError) and not (
        isinstance(error, tf.errors.InvalidArgumentError)
        and "parse" in str(error).lower()
    ):
      return
    for name in ("eval_file_pattern", "train_file_pattern"):
      pattern = getattr(self, name)
      damage = pattern and data.find_damaged_record(pattern)
      if damage:
        raise DamagedFileError(
            f"{damage}; the file is damaged: make it again "
            "(tools/create_pretraining_data.py resumes) or leave it out of "
            f"PretrainTask.{name}"
        ) from error

  def has_eval_inputs(self) -> bool:
    return bool(self.eval_file_pattern)

  def initialize(self, model, optimizer) -> Optional[str]:
    if not self.init_checkpoint:
      return None
    return warm_start.init_pretrainer(
        model,
        optimizer,
        self.init_checkpoint,
        self.init_from_group0,
        self.init_optimizer_slots,
    )

  def build_model(self) -> AlbertPretrainer:
    return AlbertPretrainer.from_config_object(self.config)

  def build_inputs(
      self, input_context, *, training, batch_size, skip_examples=0, start=None
  ):
    pattern = self.train_file_pattern if training else self.eval_file_pattern
    if self._format(training) == "documents":
      return documents_data.documents_dataset(
          pattern,
          seq_length=self.seq_length,
          max_predictions_per_seq=self.max_predictions_per_seq,
          sentence_task=self.sentence_task,
          batch_size=batch_size,
          training=training,
          input_context=input_context,
          seed=self.seed,
          masking_seed=self.dynamic_masking_seed,
          skip_examples=skip_examples,
          documents_per_window=self.documents_per_window,
          cycle_length=self.cycle_length,
          vocab_size=self.config.vocab_size,
          start=start,
      )
    return data.pretraining_dataset(
        pattern,
        seq_length=self.seq_length,
        max_predictions_per_seq=self.max_predictions_per_seq,
        batch_size=batch_size,
        training=training,
        input_context=input_context,
        seed=self.seed,
        skip_examples=skip_examples,
        shuffle_buffer_size=self.shuffle_buffer_size,
        cycle_length=self.cycle_length,
        vocab_size=self.config.vocab_size,
        start=start,
    )

  def loss_totals(self, batch):
    return {
        "mlm_weight": tf.reduce_sum(batch["masked_lm_weights"]),
        "examples": tf.cast(tf.shape(batch["input_word_ids"])[0], tf.float32),
    }

  def _per_example_losses(self, outputs, batch):
    """Masked-LM NLL [B, P] and sentence-order cross-entropy [B]; the
    former in two fusions while the trainer's fused kernels are on."""
    if fusion.enabled():
      mlm_nll = fusion.sparse_cross_entropy(
          batch["masked_lm_ids"], outputs["mlm_logits"]
      )
    else:
      mlm_nll = tf_keras.losses.sparse_categorical_crossentropy(
          batch["masked_lm_ids"], outputs["mlm_logits"], from_logits=True
      )
    sop_ce = tf_keras.losses.sparse_categorical_crossentropy(
        batch["sentence_order_label"],
        outputs["sentence_order_logits"],
        from_logits=True,
    )
    return mlm_nll, sop_ce

  def compute_loss(self, outputs, batch, totals):
    mlm_nll, sop_ce = self._per_example_losses(outputs, batch)
    weights = batch["masked_lm_weights"]
    mlm_loss = tf.reduce_sum(weights * mlm_nll) / (
        totals["mlm_weight"] + MLM_EPSILON
    )
    # The unscaled per-example terms are for update_metrics in training.
    losses = {"masked_lm_loss": mlm_loss, "masked_lm_nll": mlm_nll}
    loss = mlm_loss
    if self.sentence_task != "none":
      sop_loss = tf.reduce_sum(sop_ce) / totals["examples"]
      losses["sentence_order_loss"] = sop_loss
      losses["sentence_order_ce"] = sop_ce
      loss += sop_loss
    losses["loss"] = loss
    return losses

  def build_metrics(self) -> List[tf_keras.metrics.Metric]:
    metrics = [
        tf_keras.metrics.SparseCategoricalAccuracy(name="masked_lm_accuracy"),
        tf_keras.metrics.Mean(name="masked_lm_loss"),
    ]
    if self.sentence_task != "none":
      metrics += [
          tf_keras.metrics.SparseCategoricalAccuracy(
              name="sentence_order_accuracy"
          ),
          tf_keras.metrics.Mean(name="sentence_order_loss"),
      ]
    return metrics

  def update_metrics(self, metrics, outputs, batch, losses=None):
    by_name = {m.name: m for m in metrics}
    if losses is None:
      mlm_nll, sop_ce = self._per_example_losses(outputs, batch)
    else:  # The training step's, not a second softmax over the vocabulary.
      mlm_nll, sop_ce = losses["masked_lm_nll"], losses.get("sentence_order_ce")
    # Evaluation pads its last batch: those rows weigh nothing.
    real = batch.get(input_pipeline.IS_REAL_EXAMPLE)
    weights = batch["masked_lm_weights"]
    if real is not None:
      weights *= real[:, None]
    by_name["masked_lm_accuracy"].update_state(
        batch["masked_lm_ids"], outputs["mlm_logits"], sample_weight=weights
    )
    by_name["masked_lm_loss"].update_state(mlm_nll, sample_weight=weights)
    if self.sentence_task != "none":
      by_name["sentence_order_accuracy"].update_state(
          batch["sentence_order_label"],
          outputs["sentence_order_logits"],
          sample_weight=real,
      )
      by_name["sentence_order_loss"].update_state(sop_ce, sample_weight=real)

  def model_config_dict(self) -> Dict[str, object]:
    return self.config.to_dict()
