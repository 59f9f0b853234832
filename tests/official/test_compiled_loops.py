"""official.core.compiled_loops: the trainer's loops as `tf.while_loop`s,
traced without AutoGraph, run every step in order on the batches of the
iterator, and the eval loop stops where the stream ends."""

import pytest
import tensorflow as tf

from official.core import compiled_loops
from official.distribute import strategy as strategy_lib
from tests import helpers


def _loops(strategy):
  """(seen, calls, train, evaluate): `seen` holds every batch value the
  steps received, in order (the sum of value * 10**call: order-sensitive),
  `calls` how many steps ran."""
  with strategy.scope():
    seen = tf.Variable(0, dtype=tf.int64)
    calls = tf.Variable(0, dtype=tf.int64)

  def step(batch):
    seen.assign_add(tf.reduce_sum(batch) * 10 ** calls.read_value())
    calls.assign_add(1)

  def run(fn, args):
    return strategy_lib.run(strategy, fn, args)

  train = tf.function(
      lambda it, n: compiled_loops.train_steps(run, step, it, n),
      autograph=False,
  )
  evaluate = tf.function(
      lambda it, n: compiled_loops.eval_steps(run, step, it, n),
      autograph=False,
  )
  return seen, calls, train, evaluate


@pytest.mark.parametrize("num_steps", [0, 1, 4])
def test_train_steps_run_each_batch_once_in_order(num_steps):
  strategy = tf.distribute.get_strategy()
  seen, calls, train, _ = _loops(strategy)
  iterator = iter(tf.data.Dataset.range(1, 10))
  with helpers.autograph_rewrites() as rewritten:
    train(iterator, tf.constant(num_steps))
  assert not rewritten, rewritten
  assert calls.numpy() == num_steps
  assert seen.numpy() == sum((i + 1) * 10**i for i in range(num_steps))
  # The iterator goes on after the loop's last batch.
  assert next(iterator).numpy() == num_steps + 1


@pytest.mark.parametrize("num_steps,done", [(2, 2), (3, 3), (5, 3), (0, 0)])
def test_eval_steps_stop_at_the_end_of_the_stream(num_steps, done):
  strategy = tf.distribute.get_strategy()
  seen, calls, _, evaluate = _loops(strategy)
  iterator = iter(
      strategy.experimental_distribute_dataset(
          tf.data.Dataset.range(1, 4).batch(1)
      )
  )
  with helpers.autograph_rewrites() as rewritten:
    ran = evaluate(iterator, tf.constant(num_steps))
  assert not rewritten, rewritten
  assert ran.numpy() == done == calls.numpy()
  assert seen.numpy() == sum((i + 1) * 10**i for i in range(done))
