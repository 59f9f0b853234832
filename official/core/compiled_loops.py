"""The trainer's compiled loops, written as `tf.while_loop`s.

They are what AutoGraph made of a Python `for` over `tf.range` (the same
loop, condition and body), written out so that nothing the package traces
goes through AutoGraph: its rewriting costs every fresh process, and a
killed process leaves one file per rewritten function in the temporary
directory (official/modeling/no_autograph.py).
"""

from typing import Callable

import tensorflow as tf

# `run(fn, args)`: `fn(*args)` on every replica (strategy.run).
Run = Callable[[Callable, tuple], object]


def train_steps(run: Run, step: Callable, iterator, num_steps: tf.Tensor):
  """`num_steps` calls of `run(step, (next(iterator),))`. Nothing a step
  computes decides whether or when the next one runs, so the host can
  queue them all at once."""

  def body(i):
    run(step, (next(iterator),))
    return (i + 1,)

  tf.while_loop(lambda i: i < num_steps, body, (tf.zeros_like(num_steps),))


def eval_steps(
    run: Run, step: Callable, iterator, num_steps: tf.Tensor
) -> tf.Tensor:
  """Up to `num_steps` calls of `run(step, (batch,))`, fewer if the
  iterator ends first; returns how many ran."""

  def body(done, _):  # the loop's condition reads `ended`
    batch = iterator.get_next_as_optional()
    ended = tf.logical_not(batch.has_value())

    def run_step():
      run(step, (batch.get_value(),))
      return done + 1

    return tf.cond(ended, lambda: done, run_step), ended

  done, _ = tf.while_loop(
      lambda done, ended: tf.logical_and(done < num_steps, ~ended),
      body,
      (tf.zeros_like(num_steps), tf.constant(False)),
  )
  return done
