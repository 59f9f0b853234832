"""Reads the weights, architecture and assets of a SavedModel without loading
its functions (no op registrations, no tracing; fast for any size).

Two kinds of TF Hub models:
  - TF2 SavedModels: `saved_model.pb` + `variables/`, an object-based
    checkpoint whose nodes are the SavedModel's object graph nodes, in the
    same order; a variable's name is on its SavedModel node, its value under
    the checkpoint key of the same node. A Keras model's config is in
    `keras_metadata.pb` (TF >= 2.5) or on its node (`user_object.metadata`).
  - TF1 Hub modules (`tfhub_module.pb` beside `saved_model.pb`): a TF1
    graph whose `variables/` is a name-based checkpoint.
"""

import dataclasses
import glob
import json
import os
from typing import Dict, List, Optional, Sequence

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.core.protobuf import trackable_object_graph_pb2
from tf_keras.protobuf import saved_metadata_pb2

from albert.checkpoint_conversion.errors import ConversionError
from official.errors import first_line

_OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_VALUE = "VARIABLE_VALUE"


@dataclasses.dataclass
class SavedModelFiles:
  """One SavedModel directory, parsed.

  Attributes:
    directory: the SavedModel directory.
    tf1_module: whether it is a TF1 Hub module.
    proto: its `saved_model.pb`.
  """

  directory: str
  tf1_module: bool
  proto: saved_model_pb2.SavedModel

  @property
  def variables_prefix(self) -> str:
    return os.path.join(self.directory, "variables", "variables")

  def _reader(self):
    try:
      return tf.train.load_checkpoint(self.variables_prefix)
    except (tf.errors.OpError, ValueError) as e:
      raise ConversionError(
          f"cannot read {self.variables_prefix} (a missing or damaged "
          f"variables/ directory?): {first_line(e)}"
      ) from e

  def tf1_variables(self) -> Dict[str, np.ndarray]:
    """Variable name -> array of a TF1 Hub module."""
    reader = self._reader()
    return {
        name: np.asarray(reader.get_tensor(name))
        for name in reader.get_variable_to_shape_map()
    }

  def tf2_variables(self) -> Dict[str, np.ndarray]:
    """Variable name (without `:0`) -> array of a TF2 SavedModel."""
    reader = self._reader()
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    try:
      graph.ParseFromString(reader.get_tensor(_OBJECT_GRAPH_KEY))
    except (tf.errors.OpError, ValueError) as e:
      raise ConversionError(
          f"{self.variables_prefix} has no object graph: not a TF2 SavedModel"
      ) from e
    nodes = self.proto.meta_graphs[0].object_graph_def.nodes
    if len(nodes) != len(graph.nodes):
      raise ConversionError(
          f"{self.directory}: saved_model.pb has {len(nodes)} objects and "
          f"its variables {len(graph.nodes)}: they do not belong together"
      )
    variables = {}
    for node, saved in zip(nodes, graph.nodes):
      if node.WhichOneof("kind") != "variable":
        continue
      keys = [a.checkpoint_key for a in saved.attributes if a.name == _VALUE]
      name = node.variable.name
      if not keys or name in variables:
        raise ConversionError(
            f"{self.directory}: variable {name!r} is "
            f"{'stored twice' if keys else 'not in its checkpoint'}"
        )
      variables[name] = np.asarray(reader.get_tensor(keys[0]))
    return variables

  def keras_config(self, class_names: Sequence[str]) -> Optional[Dict]:
    """The Keras config of the first object of one of `class_names`."""
    for data in self._keras_objects():
      if data.get("class_name") in class_names:
        return data.get("config")
    return None

  def keras_classes(self) -> List[str]:
    """The Keras classes of the objects the metadata describes, sorted."""
    return sorted({str(d.get("class_name")) for d in self._keras_objects()})

  def _keras_objects(self) -> List[Dict]:
    objects = []
    for metadata in self._keras_metadata():
      try:
        objects.append(json.loads(metadata))
      except ValueError:
        continue
    return objects

  def _keras_metadata(self) -> List[str]:
    path = os.path.join(self.directory, "keras_metadata.pb")
    if os.path.isfile(path):
      saved = saved_metadata_pb2.SavedMetadata()
      with open(path, "rb") as f:
        saved.ParseFromString(f.read())
      return [node.metadata for node in saved.nodes]
    nodes = self.proto.meta_graphs[0].object_graph_def.nodes
    return [
        node.user_object.metadata
        for node in nodes
        if node.WhichOneof("kind") == "user_object"
        and node.user_object.metadata
    ]

  def asset(self, name: str) -> Optional[str]:
    path = os.path.join(self.directory, "assets", name)
    return path if os.path.isfile(path) else None

  def sentencepiece_models(self) -> List[str]:
    return sorted(glob.glob(os.path.join(self.directory, "assets", "*.model")))


def open_saved_model(directory: str) -> SavedModelFiles:
  """The SavedModel in `directory`, parsed; one line if it is not one."""
  path = os.path.join(directory, "saved_model.pb")
  if not os.path.isdir(directory):
    raise ConversionError(
        f"--checkpoint={directory} is not a directory; give the directory of "
        "a SavedModel (unpack the TF Hub / Kaggle archive into one)"
    )
  if not os.path.isfile(path):
    raise ConversionError(
        f"--checkpoint={directory} has no saved_model.pb: not a SavedModel "
        "directory (unpack the TF Hub / Kaggle archive into one)"
    )
  proto = saved_model_pb2.SavedModel()
  try:
    with open(path, "rb") as f:
      proto.ParseFromString(f.read())
  except Exception as e:  # protobuf's DecodeError has no stable home
    raise ConversionError(
        f"{path} is not a SavedModel ({first_line(e)})"
    ) from e
  if not proto.meta_graphs:
    raise ConversionError(f"{path} holds no graph: not a SavedModel")
  return SavedModelFiles(
      directory=directory,
      tf1_module=os.path.isfile(os.path.join(directory, "tfhub_module.pb")),
      proto=proto,
  )
