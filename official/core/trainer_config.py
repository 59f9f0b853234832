"""`TrainerConfig`: how long and how a `Trainer` trains and evaluates."""

import dataclasses
from typing import Optional

import gin

POLICIES = ("float32", "mixed_float16", "mixed_bfloat16")


@gin.configurable
@dataclasses.dataclass(frozen=True)
class TrainerConfig:
  """Attributes:
  train_steps: total optimizer steps.
  steps_per_loop: steps per compiled loop: one progress line per loop, and
    what a preemption may cost (`official.core.preemption`); no step in a
    loop waits on the host.
  checkpoint_interval: steps between checkpoints.
  max_checkpoints: checkpoints kept.
  eval_interval: steps between evaluations (0: only at the end).
  eval_steps: eval batches per evaluation (fewer if the eval data ends).
  early_stopping_patience: with a best-checkpoint evaluation
    (`official.core.best_checkpoint`), stop after this many evaluations in a
    row without improvement (0: never).
  gradient_accumulation_steps: micro-batches summed into one update.
  clip_norm: global gradient-norm clip (<= 0: off).
  mixed_precision_policy: `float32`, `mixed_float16` (with dynamic loss
    scaling) or `mixed_bfloat16`.
  jit_compile: compile with XLA: the whole replica step (forward and
    backward passes, gradient sum, clipping, optimizer update, metrics)
    with one replica; each micro-batch's forward and backward pass with
    several (`official.core.trainer`).
  recompute: recompute each block's activations in the backward pass
    (`official.modeling.recompute`): less activation memory for a second
    forward pass; needs the model's dropout at 0; with and without XLA
    (docs/performance.md).
  fused_kernels: in the training step, run the GELU's and the residual
    LayerNorms' element-wise formulas as XLA fusions and recompute the
    attention probabilities and the GELU's output in the backward pass
    instead of keeping them (`official.modeling.fusion`): faster and about
    a third less peak memory (docs/performance.md).
  seed: seeds weight initialisation.
  deterministic: enable TensorFlow op determinism (bit-exact reruns).
  preemption_grace_seconds: on SIGTERM or SIGINT the run finishes the loop
    in flight, saves a checkpoint and stops (`official.core.preemption`);
    if that takes longer than this, it exits without them. None (default):
    twice what the loop and a save should still take, plus a minute; 0: no
    limit.
  """

  train_steps: int = 125000
  steps_per_loop: int = 1000
  checkpoint_interval: int = 5000
  max_checkpoints: int = 5
  eval_interval: int = 0
  eval_steps: int = 100
  early_stopping_patience: int = 0
  gradient_accumulation_steps: int = 1
  clip_norm: float = 1.0
  mixed_precision_policy: str = "float32"
  jit_compile: bool = False
  recompute: bool = False
  fused_kernels: bool = True
  seed: int = 12345
  deterministic: bool = False
  preemption_grace_seconds: Optional[float] = None

  def micro_batch_size(self, global_batch_size: int, replicas: int) -> int:
    """Examples per replica per micro-batch; ValueError if they do not
    divide `global_batch_size` evenly."""
    accumulation = self.gradient_accumulation_steps
    if global_batch_size % (replicas * accumulation):
      raise ValueError(
          f"global_batch_size={global_batch_size} must be divisible by "
          f"replicas ({replicas}) x gradient_accumulation_steps "
          f"({accumulation})"
      )
    return global_batch_size // (replicas * accumulation)

  def next_stop(self, step: int) -> int:
    """The next step at which a compiled loop must end (a checkpoint, an
    evaluation, the loop length or the end of training)."""
    stops = [
        self.train_steps,
        step + self.steps_per_loop,
        (step // self.checkpoint_interval + 1) * self.checkpoint_interval,
    ]
    if self.eval_interval:
      stops.append((step // self.eval_interval + 1) * self.eval_interval)
    return min(stops)

  def __post_init__(self):
    for name in (
        "train_steps",
        "steps_per_loop",
        "checkpoint_interval",
        "max_checkpoints",
        "eval_steps",
        "gradient_accumulation_steps",
    ):
      value = getattr(self, name)
      if not isinstance(value, int) or value <= 0:
        raise ValueError(
            f"TrainerConfig.{name}={value!r} must be a positive integer"
        )
    for name in ("eval_interval", "early_stopping_patience"):
      value = getattr(self, name)
      if not isinstance(value, int) or value < 0:
        raise ValueError(f"TrainerConfig.{name}={value!r} must be >= 0")
    grace = self.preemption_grace_seconds
    if grace is not None and (not isinstance(grace, (int, float)) or grace < 0):
      raise ValueError(
          f"TrainerConfig.preemption_grace_seconds={grace!r} must be >= 0 "
          "(or None: sized from the run)"
      )
    if self.mixed_precision_policy not in POLICIES:
      raise ValueError(
          f"TrainerConfig.mixed_precision_policy="
          f"{self.mixed_precision_policy!r} is not one of "
          f"{POLICIES}"
      )
