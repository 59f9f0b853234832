"""Activation recomputation (gradient checkpointing), chosen per training run.

`TrainerConfig.recompute` switches it on while the trainer traces its
forward pass (`scope`). A layer that supports it runs each of its blocks
through `block(fn)`: with recomputation on, only the block's input is kept
for the backward pass, which runs the block again to get its activations
(`tf.recompute_grad`), so the activation memory of a deep stack is about one
block's plus one tensor per block, at the cost of a second forward pass.
Nothing else changes: the same weights, names and checkpoints, and gradients
equal to the plain ones within float32 round-off.

Recomputing a block that draws random numbers (dropout) would draw other
ones than its forward pass did: such a layer declares a
`recompute_refusal()` (see `dropout_refusal`), and `scope(model=...)` refuses
the model before any step.
"""

import contextlib
from typing import Callable, Optional

import tensorflow as tf

_depth = [0]  # A global, not thread-local: replicas trace in their threads.


@contextlib.contextmanager
def scope(enabled: bool = True, model: Optional[tf.Module] = None):
  """Recomputation on (when `enabled`) for the layers called inside.

  Raises:
    ValueError: (with `model`) one of its layers cannot be recomputed; the
      first `recompute_refusal()` of its submodules that is not None.
  """
  if not enabled:
    yield
    return
  for layer in model.submodules if model is not None else ():
    refusal = getattr(layer, "recompute_refusal", None)
    message = refusal() if callable(refusal) else None
    if message:
      raise ValueError(message)
  _depth[0] += 1
  try:
    yield
  finally:
    _depth[0] -= 1


def enabled() -> bool:
  return _depth[0] > 0


def block(fn: Callable) -> Callable:
  """`fn` (tensors -> tensors), recomputed in the backward pass when on."""
  return tf.recompute_grad(fn) if enabled() else fn


def dropout_refusal(layer_name: str, **rates: float) -> Optional[str]:
  """The one-line refusal of a layer with dropout (any rate above 0), for
  its `recompute_refusal()`; None without."""
  active = {name: rate for name, rate in rates.items() if rate}
  if not active:
    return None
  settings = ", ".join(f"{k}={v}" for k, v in sorted(active.items()))
  return (
      f"TrainerConfig.recompute=True cannot recompute {layer_name} with "
      f"dropout ({settings}): a recomputed block would draw other dropout "
      "masks than its forward pass; set them to 0 (ALBERT v2's values) or "
      "train without recompute"
  )
