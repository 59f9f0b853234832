"""LAMB: layer-wise adaptive moments (You et al., 2019), as ALBERT uses it.

Per variable w with gradient g (ALBERT paper section 4.1; docs/reference.md
section 5):

    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g^2
    u = m / (sqrt(v) + eps)            # m, v bias-corrected only when asked
    u += wd * w                        # unless w is excluded from weight decay
    r = ||w|| / ||u|| if both > 0 else 1   # 1 if w is excluded from adaptation
    w -= lr * r * u

The original ALBERT LAMB has no bias correction; `bias_correction=True` gives
the variant of the LAMB paper. Gradient clipping is not done here: the training
step clips the global gradient norm before calling `apply_gradients`.
"""

import re
from typing import Optional, Sequence, Tuple

import tensorflow as tf
import tf_keras

DEFAULT_EXCLUDE_PATTERNS = ("LayerNorm", "layer_norm", "bias")


class Lamb(tf_keras.optimizers.Optimizer):
  """LAMB optimizer with name-pattern exclusions.

  Args:
    learning_rate: float or a `LearningRateSchedule` of the iteration.
    beta_1: decay of the first moment.
    beta_2: decay of the second moment.
    epsilon: added to sqrt(v).
    weight_decay_rate: decoupled weight decay, added to the update direction.
    exclude_from_weight_decay: regex patterns; a variable whose name matches
      one gets no weight decay. `None` means LayerNorm, layer_norm and bias.
    exclude_from_layer_adaptation: regex patterns; a matching variable uses
      trust ratio 1. `None` means the same list as `exclude_from_weight_decay`.
    bias_correction: divide m and v by (1 - b^t) as in Adam.
    name: optimizer name (the checkpoint scope of its slots).
    **kwargs: passed to `tf_keras.optimizers.Optimizer` (e.g. `jit_compile`).
  """

  def __init__(
      self,
      learning_rate=0.00176,
      beta_1: float = 0.9,
      beta_2: float = 0.999,
      epsilon: float = 1e-6,
      weight_decay_rate: float = 0.01,
      exclude_from_weight_decay: Optional[Sequence[str]] = None,
      exclude_from_layer_adaptation: Optional[Sequence[str]] = None,
      bias_correction: bool = False,
      name: str = "LAMB",
      **kwargs,
  ):
    for arg, value in (("beta_1", beta_1), ("beta_2", beta_2)):
      if not 0.0 <= value < 1.0:
        raise ValueError(f"{arg}={value} must be in [0, 1)")
    if epsilon <= 0:
      raise ValueError(f"epsilon={epsilon} must be > 0")
    if weight_decay_rate < 0:
      raise ValueError(f"weight_decay_rate={weight_decay_rate} must be >= 0")
    for arg in ("weight_decay", "clipnorm", "global_clipnorm", "clipvalue"):
      if kwargs.get(arg) is not None:
        raise ValueError(
            f"{arg}={kwargs[arg]!r} is not supported by {type(self).__name__}: "
            "use weight_decay_rate, and clip in the training step"
        )
    super().__init__(name=name, **kwargs)
    self._learning_rate = self._build_learning_rate(learning_rate)
    self.beta_1 = beta_1
    self.beta_2 = beta_2
    self.epsilon = epsilon
    self.weight_decay_rate = weight_decay_rate
    if exclude_from_weight_decay is None:
      exclude_from_weight_decay = DEFAULT_EXCLUDE_PATTERNS
    if exclude_from_layer_adaptation is None:
      exclude_from_layer_adaptation = exclude_from_weight_decay
    self.exclude_from_weight_decay = tuple(exclude_from_weight_decay)
    self.exclude_from_layer_adaptation = tuple(exclude_from_layer_adaptation)
    self.bias_correction = bias_correction

  def build(self, var_list):
    """Creates the first and second moment slots `m` and `v` per variable."""
    super().build(var_list)
    if getattr(self, "_built", False):
      return
    self._built = True
    self._momentums = [
        self.add_variable_from_reference(model_variable=var, variable_name="m")
        for var in var_list
    ]
    self._velocities = [
        self.add_variable_from_reference(model_variable=var, variable_name="v")
        for var in var_list
    ]

  def slots(self, variable: tf.Variable) -> Tuple[tf.Variable, tf.Variable]:
    """The (m, v) moment slots of `variable`, one of the built var_list.

    Checkpoint converters read and write optimizer state through this.
    """
    key = self._var_key(variable)
    if not getattr(self, "_built", False) or key not in self._index_dict:
      raise ValueError(
          f"{variable.name} has no {self.name} slots: call "
          "build() with a var_list that holds it first"
      )
    index = self._index_dict[key]
    return self._momentums[index], self._velocities[index]

  def applies_weight_decay(self, name: str) -> bool:
    """Whether the variable called `name` gets weight decay."""
    return self.weight_decay_rate > 0 and not _matches(
        name, self.exclude_from_weight_decay
    )

  def applies_layer_adaptation(self, name: str) -> bool:
    """Whether the variable called `name` uses the trust ratio ||w|| / ||u||."""
    return not _matches(name, self.exclude_from_layer_adaptation)

  def update_step(self, gradient, variable):
    """Applies one LAMB update to `variable` (see the module docstring)."""
    dtype = variable.dtype
    gradient = tf.cast(tf.convert_to_tensor(gradient), dtype)  # dense update
    index = self._index_dict[self._var_key(variable)]
    m = self._momentums[index]
    v = self._velocities[index]
    lr = tf.cast(self.learning_rate, dtype)
    beta_1 = tf.cast(self.beta_1, dtype)
    beta_2 = tf.cast(self.beta_2, dtype)

    m.assign(beta_1 * m + (1.0 - beta_1) * gradient)
    v.assign(beta_2 * v + (1.0 - beta_2) * tf.square(gradient))
    m_hat, v_hat = m, v
    if self.bias_correction:
      step = tf.cast(self.iterations + 1, dtype)
      m_hat = m / (1.0 - tf.pow(beta_1, step))
      v_hat = v / (1.0 - tf.pow(beta_2, step))
    update = m_hat / (tf.sqrt(v_hat) + tf.cast(self.epsilon, dtype))
    name = variable.name
    if self.applies_weight_decay(name):
      update += tf.cast(self.weight_decay_rate, dtype) * variable
    ratio = self._trust_ratio(name, variable, update)
    variable.assign_sub(lr * ratio * update)

  def _trust_ratio(
      self, name: str, variable: tf.Variable, update: tf.Tensor
  ) -> tf.Tensor:
    """||w|| / ||u|| when both are positive and `name` is adapted, else 1."""
    one = tf.ones([], variable.dtype)
    if not self.applies_layer_adaptation(name):
      return one
    w_norm = tf.norm(variable)
    u_norm = tf.norm(update)
    return tf.where(
        w_norm > 0.0, tf.where(u_norm > 0.0, w_norm / u_norm, one), one
    )

  def get_config(self):
    config = super().get_config()
    config.update(
        {
            "learning_rate": self._serialize_hyperparameter(
                self._learning_rate
            ),
            "beta_1": self.beta_1,
            "beta_2": self.beta_2,
            "epsilon": self.epsilon,
            "weight_decay_rate": self.weight_decay_rate,
            "exclude_from_weight_decay": list(self.exclude_from_weight_decay),
            "exclude_from_layer_adaptation": list(
                self.exclude_from_layer_adaptation
            ),
            "bias_correction": self.bias_correction,
        }
    )
    for unused in ("weight_decay", "clipnorm", "global_clipnorm", "clipvalue"):
      config.pop(unused, None)
    return config


def _matches(name: str, patterns: Sequence[str]) -> bool:
  return any(re.search(pattern, name) for pattern in patterns)
