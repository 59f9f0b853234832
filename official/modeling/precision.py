"""Keras mixed-precision policies by the names commands take, and a scope.

Commands that run a trained model (export, serving benchmarks) take
`--precision=float32|bfloat16`; training takes the Keras policy names
(`TrainerConfig.mixed_precision_policy`). A model built inside
`policy_scope(...)` computes in that policy's dtype and keeps float32
variables, so a float32 checkpoint restores into it unchanged.
"""

import contextlib
from typing import Iterator

import tf_keras

# --precision value -> Keras policy of the model built for it.
SERVING_POLICIES = {"float32": "float32", "bfloat16": "mixed_bfloat16"}


@contextlib.contextmanager
def policy_scope(policy: str) -> Iterator[None]:
  """Sets the global Keras policy for the block, then restores the old one."""
  previous = tf_keras.mixed_precision.global_policy()
  tf_keras.mixed_precision.set_global_policy(policy)
  try:
    yield
  finally:
    tf_keras.mixed_precision.set_global_policy(previous)


def serving_policy(precision: str) -> str:
  """The Keras policy of `--precision=precision`; ValueError if unknown."""
  try:
    return SERVING_POLICIES[precision]
  except KeyError:
    raise ValueError(
        f"precision={precision!r} is not one of {tuple(SERVING_POLICIES)}"
    ) from None
