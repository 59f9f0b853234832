"""The processes `albert.benchmarks.training.measure` times, one variant each:

  python -m albert.benchmarks.training_workers PRECISION/VARIANT SETTINGS_JSON

builds the variant (ours through the real trainer, transformers' model, or
the matrix-multiply rate), warms it up and serves timed steps to the
parent's turns (`official.benchmark.turns`).
"""

import contextlib
import dataclasses
import json
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf

from albert.benchmarks.training import OURS
from albert.benchmarks.training import PEERS
from albert.benchmarks.training import PRECISIONS
from albert.benchmarks.training import TrainBenchmark
from albert.modeling.config import AlbertConfig
from albert.pretraining.task import PretrainTask
from albert.finetuning.glue.task import GlueTask
from official.benchmark import turns
from official.core.trainer import Trainer
from official.core.trainer_config import TrainerConfig
from official.distribute.strategy import make_strategy
from official.errors import InputError
from official.optimization.optimizer_config import OptimizerConfig


def synthetic_batch(s: TrainBenchmark, config: AlbertConfig):
  """One batch of random inputs of the benchmark's shapes and task."""
  rng = np.random.default_rng(0)
  shape = (s.batch_size, s.seq_length)
  inputs = {
      "input_word_ids": rng.integers(5, config.vocab_size, shape, np.int32),
      "input_mask": np.ones(shape, np.int32),
      "input_type_ids": (np.arange(s.seq_length) >= s.seq_length // 2)
      .astype(np.int32)[None]
      .repeat(s.batch_size, 0),
  }
  if s.classification:
    labels = rng.integers(0, s.num_classes, s.batch_size).astype(np.int32)
    return dict(inputs, label=labels)
  positions = np.sort(
      np.stack(
          [
              rng.choice(
                  np.arange(1, s.seq_length),
                  s.max_predictions_per_seq,
                  replace=False,
              )
              for _ in range(s.batch_size)
          ]
      ),
      axis=1,
  )
  return {
      **inputs,
      "masked_lm_positions": positions.astype(np.int32),
      "masked_lm_ids": rng.integers(
          5, config.vocab_size, positions.shape
      ).astype(np.int32),
      "masked_lm_weights": np.ones(positions.shape, np.float32),
      "sentence_order_label": rng.integers(0, 2, s.batch_size).astype(np.int32),
  }


def _synthetic(task_cls, batch):
  """`task_cls` reading `batch` over and over instead of its files."""

  class Synthetic(task_cls):

    def build_inputs(
        self, input_context, *, training, batch_size, skip_examples=0
    ):
      del input_context, training, batch_size, skip_examples
      return tf.data.Dataset.from_tensors(batch).repeat()

  return Synthetic


def serve_ours(s: TrainBenchmark, precision: str, xla: bool) -> None:
  """The real Trainer step on one repeated in-memory batch."""
  config = s.model_config()
  batch = synthetic_batch(s, config)
  optimizer_config = OptimizerConfig()
  if s.classification:  # MNLI's task and head, fine-tuned with AdamW
    task = _synthetic(GlueTask, batch)(
        task_name="mnli",
        seq_length=s.seq_length,
        global_batch_size=s.batch_size,
        model_config=config,
    )
    assert task.num_classes == s.num_classes
    optimizer_config = dataclasses.replace(optimizer_config, name="adamw")
  else:
    task = _synthetic(PretrainTask, batch)(
        train_file_pattern="synthetic",
        global_batch_size=s.batch_size,
        seq_length=s.seq_length,
        max_predictions_per_seq=s.max_predictions_per_seq,
        model_config=config,
    )
  gin_config = TrainerConfig()
  trainer_config = dataclasses.replace(
      gin_config,
      train_steps=10**9,
      mixed_precision_policy=precision,
      jit_compile=xla,
      recompute=s.recompute or gin_config.recompute,
  )
  with tempfile.TemporaryDirectory() as model_dir:
    trainer = Trainer(
        task=task,
        strategy=make_strategy("default"),
        optimizer_config=optimizer_config,
        config=trainer_config,
        model_dir=model_dir,
    )
    iterator = trainer.train_iterator()
    first_loss, _ = trainer.run_steps(iterator, 1)
    if s.warmup_steps > 1:
      trainer.run_steps(iterator, s.warmup_steps - 1)
    last = {}

    def run(_):
      last["loss"], _ = trainer.run_steps(iterator, 1)

    turns.serve(run, {"first_loss": first_loss}, lambda: dict(last))


def serve_torch(s: TrainBenchmark, precision: str, compiled: bool) -> None:
  """transformers' AlbertForPreTraining + AdamW, MLM on masked positions;
  or, fine-tuning, AlbertForSequenceClassification + AdamW."""
  # Imported here: the peer is a test-time dependency, never a runtime one.
  import torch
  import transformers

  config = s.model_config()
  batch = {
      k: torch.from_numpy(v).long()
      if v.dtype != "float32"
      else torch.from_numpy(v)
      for k, v in synthetic_batch(s, config).items()
  }
  model_cls = (
      transformers.AlbertForSequenceClassification
      if s.classification
      else transformers.AlbertForPreTraining
  )
  model = model_cls(
      transformers.AlbertConfig(
          vocab_size=config.vocab_size,
          embedding_size=config.embedding_size,
          hidden_size=config.hidden_size,
          num_hidden_layers=config.num_layers,
          num_attention_heads=config.num_heads,
          intermediate_size=config.intermediate_size,
          num_hidden_groups=config.num_hidden_groups,
          inner_group_num=config.inner_group_num,
          hidden_act="gelu_new",
          hidden_dropout_prob=0.0,
          attention_probs_dropout_prob=0.0,
          max_position_embeddings=config.max_position_embeddings,
          num_labels=s.num_classes,
          classifier_dropout_prob=0.1,  # ours: GlueTask.dropout_rate
      )
  )
  optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
  autocast = {
      "float32": contextlib.nullcontext,
      "mixed_bfloat16": lambda: torch.autocast("cpu", torch.bfloat16),
      "mixed_float16": lambda: torch.autocast("cpu", torch.float16),
  }[precision]
  hidden = config.hidden_size

  def classification_loss(inputs):
    logits = model(
        input_ids=inputs["input_word_ids"],
        attention_mask=inputs["input_mask"],
        token_type_ids=inputs["input_type_ids"],
    ).logits
    return torch.nn.functional.cross_entropy(logits.float(), inputs["label"])

  def losses(inputs):
    out = model.albert(
        input_ids=inputs["input_word_ids"],
        attention_mask=inputs["input_mask"],
        token_type_ids=inputs["input_type_ids"],
    )
    index = inputs["masked_lm_positions"][..., None].expand(-1, -1, hidden)
    masked = out.last_hidden_state.gather(1, index)  # [B, P, H]
    logits = model.predictions(masked).float()  # [B, P, V]
    mlm = torch.nn.functional.cross_entropy(
        logits.flatten(0, 1), inputs["masked_lm_ids"].flatten()
    )
    sop = torch.nn.functional.cross_entropy(
        model.sop_classifier(out.pooler_output).float(),
        inputs["sentence_order_label"],
    )
    return mlm + sop

  loss_fn = classification_loss if s.classification else losses
  forward = torch.compile(loss_fn) if compiled else loss_fn

  def step():
    optimizer.zero_grad(set_to_none=True)
    with autocast():
      loss = forward(batch)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return float(loss)

  first_loss = step()
  for _ in range(s.warmup_steps - 1):
    step()
  last = {}

  def run(_):
    last["loss"] = step()

  turns.serve(
      run,
      {"first_loss": first_loss, "threads": torch.get_num_threads()},
      lambda: dict(last),
  )


def block_products(s: TrainBenchmark, config: AlbertConfig):
  """(m, k, n, transpose_a, transpose_b) of the matrix products one encoder
  block runs in a training step, outside attention's batched ones: for each
  dense layer k -> n (query, key, value and output H -> H, the FFN's
  H -> intermediate -> H) x W [m, k] x [k, n], its input's gradient
  dy W^T and its kernel's gradient x^T dy, at m = batch x sequence rows."""
  m = s.batch_size * s.seq_length
  h, f = config.hidden_size, config.intermediate_size
  products = []
  for k, n in [(h, h)] * 4 + [(h, f), (f, h)]:
    products += [
        (m, k, n, False, False),  # x W
        (m, n, k, False, True),  # dy W^T
        (k, m, n, True, False),  # x^T dy
    ]
  return products


def _best_gflops(run, flop: float) -> float:
  """GFLOP/s of `run()` (a call that does `flop` of work and waits for it):
  one warm-up call, then the fastest of three."""
  run()
  seconds = []
  for _ in range(3):
    start = time.perf_counter()
    run()
    seconds.append(time.perf_counter() - start)
  return flop / min(seconds) / 1e9


def _block_gflops(products, dtype) -> float:
  """TensorFlow's rate for `products` (block_products' tuples), each once
  in one function as a step runs them, best of three calls."""
  operands = []
  for m, k, n, ta, tb in products:
    a = tf.random.normal([k, m] if ta else [m, k])
    b = tf.random.normal([n, k] if tb else [k, n], stddev=k**-0.5)
    operands.append((tf.cast(a, dtype), tf.cast(b, dtype), ta, tb))

  @tf.function(autograph=False)
  def block():
    total = tf.zeros([], tf.float32)
    for a, b, ta, tb in operands:  # read, so none is pruned
      product = tf.matmul(a, b, transpose_a=ta, transpose_b=tb)
      total += tf.cast(product[0, 0], tf.float32)
    return total

  return _best_gflops(
      lambda: block().numpy(),
      2.0 * sum(m * k * n for m, k, n, _, _ in products),
  )


def serve_matmul(s: TrainBenchmark, precision: str) -> None:
  """TensorFlow's rate in `precision` for the best product a step has,
  [B*T, H] x [H, intermediate], and for the mix of an encoder block's
  products forward and backward (`block_products`)."""
  config = s.model_config()
  dtype = {
      "float32": tf.float32,
      "mixed_bfloat16": tf.bfloat16,
      "mixed_float16": tf.float16,
  }[precision]
  m, k, n = (
      s.batch_size * s.seq_length,
      config.hidden_size,
      config.intermediate_size,
  )
  a = tf.cast(tf.random.normal([m, k]), dtype)
  b = tf.cast(tf.random.normal([k, n], stddev=k**-0.5), dtype)
  reps = 8

  @tf.function(autograph=False)
  def chain(x):
    total = tf.zeros([], tf.float32)
    for _ in range(reps):  # independent products, read so none is pruned
      total += tf.cast(tf.matmul(x, b)[0, 0], tf.float32)
      x = x + tf.cast(1e-3, dtype)
    return total

  info = {
      "matmul_gflops": _best_gflops(
          lambda: chain(a).numpy(), 2.0 * m * k * n * reps
      ),
      "shape": [m, k, n],
      "block_matmul_gflops": _block_gflops(block_products(s, config), dtype),
  }
  turns.serve(lambda _: None, info)


def serve_worker(s: TrainBenchmark, name: str) -> None:
  """Serves variant `name` (PRECISION/VARIANT or PRECISION/matmul) to the
  parent's turns until its stdin closes."""
  precision, _, variant = name.partition("/")
  if precision not in PRECISIONS or variant not in OURS + PEERS + ("matmul",):
    raise InputError(
        f"unknown benchmark worker {name!r}: one of PRECISION/VARIANT with "
        f"PRECISION in {PRECISIONS} and VARIANT in {OURS + PEERS + ('matmul',)}"
    )
  if variant == "matmul":
    serve_matmul(s, precision)
  elif variant in OURS:
    serve_ours(s, precision, xla=variant == "tf_xla")
  else:
    serve_torch(s, precision, compiled=variant == "torch_compile")


if __name__ == "__main__":
  serve_worker(TrainBenchmark(**json.loads(sys.argv[2])), sys.argv[1])
