"""AdamW: LAMB's update without the layer-wise trust ratio.

The original BERT / ALBERT fine-tuning optimizer (`AdamWeightDecayOptimizer`):
decoupled weight decay added to the Adam direction, no bias correction by
default, and the same LayerNorm / bias exclusions as LAMB (docs/reference.md
section 5).
"""

from typing import Optional, Sequence

import tensorflow as tf

from official.optimization import lamb


class AdamW(lamb.Lamb):
  """Adam with decoupled weight decay: `Lamb` with trust ratio fixed at 1.

  Args: as `Lamb`, without `exclude_from_layer_adaptation` (nothing adapts).
  """

  def __init__(
      self,
      learning_rate=1e-5,
      beta_1: float = 0.9,
      beta_2: float = 0.999,
      epsilon: float = 1e-6,
      weight_decay_rate: float = 0.01,
      exclude_from_weight_decay: Optional[Sequence[str]] = None,
      bias_correction: bool = False,
      name: str = "AdamW",
      **kwargs,
  ):
    kwargs.pop("exclude_from_layer_adaptation", None)  # from get_config
    super().__init__(
        learning_rate=learning_rate,
        beta_1=beta_1,
        beta_2=beta_2,
        epsilon=epsilon,
        weight_decay_rate=weight_decay_rate,
        exclude_from_weight_decay=exclude_from_weight_decay,
        exclude_from_layer_adaptation=(".*",),
        bias_correction=bias_correction,
        name=name,
        **kwargs,
    )

  def _trust_ratio(
      self, name: str, weights: tf.Tensor, update: tf.Tensor
  ) -> tf.Tensor:
    del name, update  # AdamW never adapts per layer.
    return tf.ones([], weights.dtype)
