"""Activation recomputation (gradient checkpointing), chosen per training run.

`TrainerConfig.recompute` switches it on while the trainer traces its
forward pass (`scope`). A layer that supports it runs its blocks through
`sequential`: with recomputation on, only each block's input is kept for
the backward pass, which runs the block again to get its activations, so
the activation memory of a deep stack is about one block's plus one tensor
per block, at the cost of a second forward pass.
Nothing else changes: the same weights, names and checkpoints, and gradients
equal to the plain ones within float32 round-off.

Recomputing a block that draws random numbers (dropout) would draw other
ones than its forward pass did: such a layer declares a
`recompute_refusal()` (see `dropout_refusal`), and `scope(model=...)` refuses
the model before any step.
"""

import contextlib
from typing import Callable, List, Optional, Sequence

import tensorflow as tf

from official.modeling import fusion

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


def _forward(blocks: Sequence[Callable], x: tf.Tensor):
  """([each block's input], [each block's output]) of one pass."""
  inputs, outputs = [], []
  for run in blocks:
    inputs.append(x)
    x = run(x)
    outputs.append(x)
  return inputs, outputs


def sequential(blocks: Sequence[Callable], x: tf.Tensor) -> List[tf.Tensor]:
  """Runs `blocks` (each a tensor -> tensor) one after another; returns
  every block's output.

  With recomputation on, the backward pass keeps only each block's input:
  it runs the blocks again from the last to the first, each right before its
  own gradient, and adds each block's weight gradients to a running sum as
  it goes. For blocks that share weights (ALBERT's cross-layer sharing) the
  sum matters as much as the recomputation: a per-block gradient of
  ALBERT-xxlarge's shared weights is 0.8 GB, and a plain backward pass holds
  all twelve until it adds them up.
  """
  if not enabled():
    return _forward(blocks, x)[1]

  @tf.custom_gradient
  def stack(x):
    inputs, outputs = _forward(blocks, x)

    def gradient(*upstream, variables=None):
      variables = list(variables or ())
      sums = [None] * len(variables)
      dx = None
      for i in reversed(range(len(blocks))):
        dy = upstream[i]
        if dy is None:
          dy = tf.zeros_like(outputs[i])
        if dx is not None:
          dy = dy + dx
        # After dy, so that the recomputation cannot be merged with the
        # forward pass, and after the later block's weight gradients are
        # summed: TensorFlow's executor would otherwise run ahead along
        # the dx chain and keep every block's recomputed activations alive
        # for weight gradients it has not computed yet.
        done = [dy] + [g for g in sums if g is not None]
        with tf.control_dependencies(done), tf.GradientTape() as tape:
          (x,) = fusion.after(done, inputs[i])  # also under XLA
          tape.watch(x)
          y = blocks[i](x)
        grads = tape.gradient(y, [x] + variables, output_gradients=dy)
        dx = grads[0]
        for j, g in enumerate(grads[1:]):
          if g is not None:
            g = tf.convert_to_tensor(g)
            sums[j] = g if sums[j] is None else sums[j] + g
      return dx, [
          tf.zeros_like(v) if g is None else g for g, v in zip(sums, variables)
      ]

    return outputs, gradient

  return stack(x)


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
