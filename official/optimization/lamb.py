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

import numpy as np
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
    # tf_keras' own decoupled decay (`weight_decay`, 0 by default) would
    # still subtract `w * 0 * lr` from every variable each step: a pass over
    # all weights and seven graph ops per variable for nothing. None turns
    # it off; this class decays in `update_step`.
    kwargs.pop("weight_decay", None)
    super().__init__(name=name, weight_decay=None, **kwargs)
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
    """Applies one LAMB update to `variable` (see the module docstring).

    Written for a small graph (this runs once per variable when a training
    step is traced): constants such as 1 - beta_1 are folded in the
    variable's dtype, as the kernels would compute them; the new moments
    and the variable are used as tensors rather than read again.
    """
    dtype = variable.dtype
    gradient = tf.cast(tf.convert_to_tensor(gradient), dtype)  # dense update
    index = self._index_dict[self._var_key(variable)]
    m = self._momentums[index]
    v = self._velocities[index]
    lr = tf.cast(self.learning_rate, dtype)
    beta_1, one_minus_beta_1 = _and_one_minus(self.beta_1, dtype)
    beta_2, one_minus_beta_2 = _and_one_minus(self.beta_2, dtype)

    new_m = beta_1 * m + one_minus_beta_1 * gradient
    new_v = beta_2 * v + one_minus_beta_2 * tf.square(gradient)
    m.assign(new_m)
    v.assign(new_v)
    m_hat, v_hat = new_m, new_v
    if self.bias_correction:
      step = tf.cast(self.iterations + 1, dtype)
      m_hat = new_m / (1.0 - tf.pow(tf.constant(beta_1, dtype), step))
      v_hat = new_v / (1.0 - tf.pow(tf.constant(beta_2, dtype), step))
    update = m_hat / (tf.sqrt(v_hat) + _constant(self.epsilon, dtype))
    name = variable.name
    weights = tf.convert_to_tensor(variable)
    if self.applies_weight_decay(name):
      update += _constant(self.weight_decay_rate, dtype) * weights
    ratio = self._trust_ratio(name, weights, update)
    variable.assign_sub(lr * ratio * update)

  def _trust_ratio(
      self, name: str, weights: tf.Tensor, update: tf.Tensor
  ) -> tf.Tensor:
    """||w|| / ||u|| when both are positive and `name` is adapted, else 1."""
    one = tf.ones([], weights.dtype)
    if not self.applies_layer_adaptation(name):
      return one
    w_norm = _norm(weights)
    u_norm = _norm(update)
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


def _constant(value: float, dtype) -> tf.Tensor:
  """Python float `value` as `tf.cast` of a float32 constant gives it:
  rounded to float32, then to `dtype`."""
  return tf.constant(np.float32(value), dtype)


def _and_one_minus(beta: float, dtype) -> Tuple[float, float]:
  """`beta` and `1 - beta` as `dtype` holds them: the difference taken in
  that dtype, as a graph's subtraction of the two constants would give."""
  as_numpy = tf.as_dtype(dtype).as_numpy_dtype
  rounded = np.asarray(np.float32(beta)).astype(as_numpy)
  return float(rounded), float(np.asarray(1.0, as_numpy) - rounded)


def _norm(x: tf.Tensor) -> tf.Tensor:
  """The Euclidean norm of all of `x`, as `tf.norm` computes it."""
  return tf.sqrt(tf.reduce_sum(tf.square(x)))
