"""Linear warmup, then polynomial decay: BERT's and ALBERT's schedule."""

import tensorflow as tf
import tf_keras


class WarmupPolynomialDecay(tf_keras.optimizers.schedules.LearningRateSchedule):
  """lr(t) for optimizer step t (0-based, the count of updates already made).

      t < s:              0
      s <= t < s + W:     peak * (t - s) / W
      otherwise:          (peak - end) * (1 - min(t, T) / T) ** power + end

  with W = `warmup_steps`, s = `start_warmup_step` and T = `decay_steps`. As
  in the original BERT / ALBERT code, the decay is measured from step 0, not
  from the end of warmup (docs/reference.md section 5), so with end 0 and
  power 1 the post-warmup rate is peak * (1 - t / T). `start_warmup_step` is
  the original's (`optimization.create_optimizer`): the warmup starts at
  step s, the decay does not move; before s the original's formula would
  give a negative rate, this one gives 0.

  Args:
    peak_learning_rate: the rate reached at the end of warmup.
    decay_steps: T, the step at which the rate reaches `end_learning_rate`.
    warmup_steps: length of the linear warmup (0 disables it).
    start_warmup_step: the step where the warmup starts.
    end_learning_rate: the rate from step T on.
    power: exponent of the polynomial decay.
  """

  def __init__(
      self,
      peak_learning_rate: float,
      decay_steps: int,
      warmup_steps: int = 0,
      end_learning_rate: float = 0.0,
      power: float = 1.0,
      name: str = "WarmupPolynomialDecay",
      start_warmup_step: int = 0,
  ):
    super().__init__()
    if peak_learning_rate < 0:
      raise ValueError(f"peak_learning_rate={peak_learning_rate} must be >= 0")
    if decay_steps <= 0:
      raise ValueError(f"decay_steps={decay_steps} must be > 0")
    if not 0 <= warmup_steps <= decay_steps:
      raise ValueError(
          f"warmup_steps={warmup_steps} must be in "
          f"[0, decay_steps={decay_steps}]"
      )
    if not 0 <= start_warmup_step <= decay_steps:
      raise ValueError(
          f"start_warmup_step={start_warmup_step} must be in "
          f"[0, decay_steps={decay_steps}]"
      )
    if end_learning_rate < 0:
      raise ValueError(f"end_learning_rate={end_learning_rate} must be >= 0")
    if power <= 0:
      raise ValueError(f"power={power} must be > 0")
    self.peak_learning_rate = peak_learning_rate
    self.decay_steps = decay_steps
    self.warmup_steps = warmup_steps
    self.start_warmup_step = start_warmup_step
    self.end_learning_rate = end_learning_rate
    self.power = power
    self.name = name

  def __call__(self, step):
    with tf.name_scope(self.name):
      step = tf.cast(step, tf.float32)
      peak = tf.constant(self.peak_learning_rate, tf.float32)
      end = tf.constant(self.end_learning_rate, tf.float32)
      # (T - t) / T rather than 1 - t / T: exact for integer steps, no
      # cancellation near the end of training.
      remaining = (
          float(self.decay_steps) - tf.minimum(step, float(self.decay_steps))
      ) / self.decay_steps
      decayed = (peak - end) * tf.pow(remaining, self.power) + end
      if self.warmup_steps == 0:
        return decayed
      since = step - float(self.start_warmup_step)
      warmup = peak * tf.maximum(since, 0.0) / float(self.warmup_steps)
      return tf.where(since < self.warmup_steps, warmup, decayed)

  def get_config(self):
    return {
        "peak_learning_rate": self.peak_learning_rate,
        "decay_steps": self.decay_steps,
        "warmup_steps": self.warmup_steps,
        "start_warmup_step": self.start_warmup_step,
        "end_learning_rate": self.end_learning_rate,
        "power": self.power,
        "name": self.name,
    }
