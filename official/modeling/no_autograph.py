"""`no_autograph`: a layer's `call` traced as written, not through AutoGraph
(`as_written`: the same for a plain function, such as one a tf.data pipeline
maps).

Keras hands every subclassed layer's `call` to AutoGraph, which parses the
method's source and rewrites it (and each function it calls) before a
`tf.function` traces it: Python `if` / `for` on tensors become `tf.cond` /
`tf.while_loop`. Code whose control flow is already graph ops, or decided
by Python values, gains nothing from that and pays for it at every fresh
trace: AutoGraph took 5.6 s of the 22.9 s of a tiny test-sized pretraining
run, 1.9 s once the layers and the trainer's gradient step were marked
(docs/performance.md, "Start-up: AutoGraph"). A marked `call` runs as
written under every trace (training, evaluation, export); a Python `if` on
a tensor inside it then fails at trace time instead of becoming a
`tf.cond`.
"""

import inspect

import tensorflow as tf


def as_written(function):
  """`function` traced as written wherever TensorFlow traces it: what a
  tf.data transformation maps (which AutoGraph would otherwise rewrite with
  every function it calls, whoever builds the pipeline: the documents
  reader's functions took 458 rewrites and 2.9 s per pipeline), or what a
  strategy calls to build a dataset. A Python `if` on a tensor inside fails
  at trace time."""
  return tf.autograph.experimental.do_not_convert(function)


def no_autograph(method):
  """`tf.autograph.experimental.do_not_convert(method)` that keeps
  `method`'s signature, from which Keras learns whether `call` takes
  `training` and `mask`."""
  wrapped = as_written(method)
  wrapped.__signature__ = inspect.signature(method)
  wrapped.no_autograph = True  # what tests look for
  return wrapped
