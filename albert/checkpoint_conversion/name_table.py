"""`NameTable`: one external format's name (and layout) of every weight we hold.

Each format module (`original_names`, `huggingface_names`) builds the table of
one model config; this class moves tensors across the boundary and checks
every one of them for name and shape on the way in.
"""

import dataclasses
from typing import Dict, Iterable, Mapping, Optional, Sequence, Tuple

import numpy as np

from albert.checkpoint_conversion.errors import ConversionError

_SHOWN = 5  # names listed in an error before "and N more"


@dataclasses.dataclass(frozen=True)
class TensorName:
  """One weight: its external name, our name, and how its layout differs.

  `transpose` is set where the external format stores the matrix as
  [out, in] (Hugging Face Linear weights, the original SOP output_weights)
  and we store a Keras kernel [in, out]. `external_shape` is set where the
  external format holds the same elements in the same order under another
  shape (the Model Garden's per-head attention kernels [H, N, H / N]
  against our [H, H]).
  """

  external: str
  ours: str
  transpose: bool = False
  external_shape: Optional[Tuple[int, ...]] = None


def _shape(shape) -> str:
  return "[" + ", ".join(str(d) for d in shape) + "]"


def name_list(names: Iterable[str]) -> str:
  """`a, b, c` or `a, b, c, d, e and 7 more`, sorted, for error messages."""
  names = sorted(names)
  shown = ", ".join(names[:_SHOWN])
  return shown + (
      f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
  )


class NameTable:
  """The external <-> our names of every weight of one model in one format.

  Args:
    entries: one `TensorName` per weight; external and our names unique.
    format_name: the format, for messages (e.g. `original TF1`).
  """

  def __init__(self, entries: Sequence[TensorName], *, format_name: str):
    self.entries = tuple(entries)
    self.format_name = format_name
    self._by_external = {e.external: e for e in self.entries}
    self._by_ours = {e.ours: e for e in self.entries}
    if len(self._by_external) != len(self.entries) or len(self._by_ours) != len(
        self.entries
    ):
      raise RuntimeError(f"{format_name} name table repeats a name")

  def __len__(self) -> int:
    return len(self.entries)

  def with_suffix(self, suffix: str) -> "NameTable":
    """The same table with `suffix` appended to every external name
    (optimizer slots: `<variable>/adam_m`)."""
    return NameTable(
        [
            dataclasses.replace(e, external=e.external + suffix)
            for e in self.entries
        ],
        format_name=self.format_name,
    )

  def check_covers(self, our_names: Iterable[str]) -> None:
    """Fails unless the table names exactly the weights `our_names`."""
    our_names = set(our_names)
    if our_names != set(self._by_ours):
      raise RuntimeError(
          f"{self.format_name} name table and the model disagree: model "
          f"only {name_list(our_names - set(self._by_ours))}; table only "
          f"{name_list(set(self._by_ours) - our_names)}"
      )

  def to_ours(
      self,
      tensors: Mapping[str, np.ndarray],
      shapes: Mapping[str, Tuple[int, ...]],
      *,
      source: str,
      may_lack: Iterable[str] = (),
  ) -> Dict[str, np.ndarray]:
    """External tensors -> our arrays, every name and shape checked.

    Args:
      tensors: external name -> array; must hold exactly the table's names,
        except that those in `may_lack` may be absent (then they are not in
        the result: the caller keeps its own values and says so).
      shapes: our name -> the shape our model expects.
      source: the file or directory read, for messages.
      may_lack: external names that the checkpoint need not hold.

    Raises:
      ConversionError: unexpected or missing tensors (named), or a tensor
        whose shape is not the config's (named, with both shapes).
    """
    unexpected = set(tensors) - set(self._by_external)
    if unexpected:
      raise ConversionError(
          f"{source}: unexpected tensors {name_list(unexpected)}: not "
          f"weights of an ALBERT pretraining model ({self.format_name} "
          "names) with this config; check that the config belongs to the "
          "checkpoint"
      )
    missing = set(self._by_external) - set(tensors) - set(may_lack)
    if missing:
      raise ConversionError(
          f"{source}: missing tensors {name_list(missing)}: the checkpoint "
          "does not hold a whole ALBERT pretraining model with this config"
      )
    ours = {}
    for entry in self.entries:
      if entry.external not in tensors:
        continue  # in may_lack
      array = np.asarray(tensors[entry.external])
      want = tuple(shapes[entry.ours])
      if entry.transpose:
        want = want[::-1]
      if entry.external_shape is not None:
        want = tuple(entry.external_shape)
      if tuple(array.shape) != want:
        raise ConversionError(
            f"{source}: tensor {entry.external} has shape "
            f"{_shape(array.shape)} but the config needs {_shape(want)}; "
            "check that the config belongs to the checkpoint"
        )
      if array.dtype != np.float32:
        raise ConversionError(
            f"{source}: tensor {entry.external} has dtype {array.dtype}, "
            "not float32; convert the checkpoint to float32 first"
        )
      if entry.external_shape is not None:
        array = array.reshape(shapes[entry.ours])
      ours[entry.ours] = array.T if entry.transpose else array
    return ours

  def to_external(
      self, ours: Mapping[str, np.ndarray]
  ) -> Dict[str, np.ndarray]:
    """Our arrays -> external tensors (contiguous, transposed where needed)."""
    self.check_covers(ours)
    external = {}
    for e in self.entries:
      array = ours[e.ours].T if e.transpose else ours[e.ours]
      if e.external_shape is not None:
        array = np.reshape(array, e.external_shape)
      external[e.external] = np.ascontiguousarray(array)
    return external
