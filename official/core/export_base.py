"""`ExportModule`: the base of serving modules built around one Keras model.

A `tf.Module` that keeps its model as an attribute makes `tf.saved_model.save`
serialize the model the Keras way as well: tf_keras traces the call of every
layer (several functions each) for its own metadata, which `tf.saved_model.load`
then revives, layer by layer, although no signature uses it. For ALBERT-large
that was most of the export time and of the load time of every SavedModel the
package writes. An `ExportModule` holds the model out of the object graph and
saves its variables instead (`model_variables`): the signatures capture those
variables, so the SavedModel holds the weights and the traced signatures, and
nothing else of Keras.
"""

import tensorflow as tf


class Untracked:
  """Attributes a SavedModel leaves out: `tf.Module` tracks the trackables
  assigned to it (models, variables, tf.functions), not this holder.

  A tf.function kept here is saved only as part of the functions that call
  it. That matters for speed: `tf.saved_model.save` lists the tf.functions it
  tracks and traces them again in its own context (a trace made outside
  `save` is not reused inside it), so a tracked helper is traced twice.
  """

  def __init__(self, **attributes):
    self.__dict__.update(attributes)


class ExportModule(tf.Module):
  """A serving module of `model`; subclasses define the tf.functions.

  `self.model` is the Keras model (not saved as such); `model_variables`, all
  its variables, are what the SavedModel restores. A function that reads a
  variable of another model must track that model's variables in an
  attribute too, or saving fails naming the untracked resource.
  """

  def __init__(self, model, name: str):
    super().__init__(name=name)
    if not getattr(model, "built", True):
      # Variables made later, while `save` traces, would not be saved.
      raise ValueError(
          f"{type(model).__name__} {model.name!r} is not built: call it once "
          "before making its serving module"
      )
    self._held = Untracked(model=model)
    self.model_variables = list(model.variables)

  @property
  def model(self):
    return self._held.model
