"""`OptimizerConfig`: the gin-bound description of optimizer and schedule."""

import dataclasses

import gin

from official.optimization.adamw import AdamW
from official.optimization.lamb import Lamb
from official.optimization.lr_schedule import WarmupPolynomialDecay

OPTIMIZERS = {"lamb": Lamb, "adamw": AdamW}


@gin.configurable
@dataclasses.dataclass(frozen=True)
class OptimizerConfig:
  """Optimizer and learning-rate schedule. Defaults: the ALBERT paper's LAMB.

  Attributes:
    name: `lamb` or `adamw`.
    learning_rate: the peak rate, reached at the end of warmup.
    warmup_steps: linear warmup length.
    start_warmup_step: the step where the warmup starts (the original's
      `--start_warmup_step`, for continued pretraining; the decay keeps
      counting from step 0).
    decay_steps: step at which the rate reaches `end_learning_rate` (usually
      the total number of training steps).
    end_learning_rate: final rate.
    power: polynomial decay power.
    weight_decay_rate: decoupled weight decay (LayerNorm and bias excluded).
    beta_1, beta_2, epsilon: moment decays and epsilon.
    bias_correction: Adam-style bias correction (off in the original).
  """

  name: str = "lamb"
  learning_rate: float = 0.00176
  warmup_steps: int = 3125
  start_warmup_step: int = 0
  decay_steps: int = 125000
  end_learning_rate: float = 0.0
  power: float = 1.0
  weight_decay_rate: float = 0.01
  beta_1: float = 0.9
  beta_2: float = 0.999
  epsilon: float = 1e-6
  bias_correction: bool = False

  def __post_init__(self):
    if self.name not in OPTIMIZERS:
      raise ValueError(
          f"OptimizerConfig.name={self.name!r} is not one of "
          f"{sorted(OPTIMIZERS)}"
      )
    # The schedule validates the step counts and rates.
    self.schedule()

  def schedule(self) -> WarmupPolynomialDecay:
    return WarmupPolynomialDecay(
        peak_learning_rate=self.learning_rate,
        decay_steps=self.decay_steps,
        warmup_steps=self.warmup_steps,
        start_warmup_step=self.start_warmup_step,
        end_learning_rate=self.end_learning_rate,
        power=self.power,
    )

  def build(self):
    """A fresh optimizer and its schedule (create under the strategy scope)."""
    return OPTIMIZERS[self.name](
        learning_rate=self.schedule(),
        beta_1=self.beta_1,
        beta_2=self.beta_2,
        epsilon=self.epsilon,
        weight_decay_rate=self.weight_decay_rate,
        bias_correction=self.bias_correction,
    )
