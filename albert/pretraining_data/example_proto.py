"""Serialized `tf.train.Example` bytes for the pretraining schema, without TF.

Writes the protobuf wire format directly (Example > Features > map<string,
Feature> > Int64List / FloatList, packed repeated fields), in the feature
order of `albert.features.PRETRAINING_FEATURES`. TensorFlow's parser reads it
like any other Example (tests check this against `tf.io.parse_example`).
Workers thereby avoid importing TensorFlow and the cost of building proto
objects.
"""

from typing import Dict

import numpy as np

from albert import features

_WIRE_LEN = 2  # Length-delimited wire type.
_FLOAT_LIST = (2 << 3) | _WIRE_LEN  # Feature.float_list
_INT64_LIST = (3 << 3) | _WIRE_LEN  # Feature.int64_list
_FIELD_1 = (1 << 3) | _WIRE_LEN  # Example.features, Features.feature,
# map entry key, *List.value (packed).
_FIELD_2 = (2 << 3) | _WIRE_LEN  # map entry value.


def varint(value: int) -> bytes:
  """Protobuf base-128 varint of a non-negative int."""
  out = bytearray()
  while value >= 0x80:
    out.append((value & 0x7F) | 0x80)
    value >>= 7
  out.append(value)
  return bytes(out)


# Values below 2**17 (any vocabulary up to 131,072 pieces, any position)
# come from a 390 KB table; larger ones are computed.
_TABLE_BITS = 17
_table = {}


def _varint_table():
  """[2**17, 3] uint8 varint bytes of every value and their lengths."""
  if not _table:
    values = np.arange(1 << _TABLE_BITS, dtype=np.uint32)
    lengths = 1 + (values >= 1 << 7).astype(np.int8)
    lengths += values >= 1 << 14
    groups = np.stack(
        [values & 0x7F, (values >> 7) & 0x7F, values >> 14], axis=1
    ).astype(np.uint8)
    groups[:, 0] |= np.where(lengths > 1, 0x80, 0).astype(np.uint8)
    groups[:, 1] |= np.where(lengths > 2, 0x80, 0).astype(np.uint8)
    _table["bytes"], _table["lengths"] = groups, lengths
    _table["columns"] = np.arange(3, dtype=np.int8)
  return _table["bytes"], _table["lengths"], _table["columns"]


def varints(values: np.ndarray) -> bytes:
  """Concatenated varints of non-negative integers, vectorised."""
  values = np.asarray(values)
  if not values.size:
    return b""
  top = int(values.max())
  if values.dtype.kind != "u" and int(values.min()) < 0:
    raise ValueError("varints() takes non-negative values only")
  if top < 0x80:
    return values.astype(np.uint8).tobytes()
  if top < 1 << _TABLE_BITS:
    table, table_lengths, columns = _varint_table()
    lengths = table_lengths[values]
    return table[values][columns < lengths[:, None]].tobytes()
  values = values.astype(np.uint64)
  width = -(-top.bit_length() // 7)
  shifts = np.arange(width, dtype=np.uint64) * np.uint64(7)
  groups = (values[:, None] >> shifts) & np.uint64(0x7F)  # [n, width]
  lengths = np.ones(len(values), dtype=np.int64)
  for k in range(1, width):
    lengths += values >= np.uint64(1 << (7 * k))
  column = np.arange(width)
  groups |= np.where(column < (lengths - 1)[:, None], 0x80, 0).astype(np.uint64)
  return groups.astype(np.uint8)[column < lengths[:, None]].tobytes()


def _length_delimited(tag: int, payload: bytes) -> bytes:
  return bytes((tag,)) + varint(len(payload)) + payload


def _entry_prefix(name: str) -> bytes:
  return _length_delimited(_FIELD_1, name.encode("utf-8"))


_PREFIXES = {
    f.record_name: _entry_prefix(f.record_name)
    for f in features.PRETRAINING_FEATURES
}
_DTYPES = {f.record_name: f.dtype for f in features.PRETRAINING_FEATURES}
_ORDER = tuple(f.record_name for f in features.PRETRAINING_FEATURES)


def _feature_prefix(name: str, payload_length: int) -> bytes:
  """Everything of a map entry that precedes the packed values."""
  if name not in _PREFIXES:
    _PREFIXES[name] = _entry_prefix(name)
  tag = _FLOAT_LIST if _DTYPES.get(name) == "float32" else _INT64_LIST
  if payload_length:
    value_list_length = 1 + len(varint(payload_length)) + payload_length
    value_list_prefix = bytes((_FIELD_1,)) + varint(payload_length)
  else:  # An empty list is an empty message.
    value_list_length, value_list_prefix = 0, b""
  feature_prefix = bytes((tag,)) + varint(value_list_length)
  feature_length = len(feature_prefix) + value_list_length
  value_prefix = bytes((_FIELD_2,)) + varint(feature_length)
  entry_length = len(_PREFIXES[name]) + len(value_prefix) + feature_length
  return (
      bytes((_FIELD_1,))
      + varint(entry_length)
      + _PREFIXES[name]
      + value_prefix
      + feature_prefix
      + value_list_prefix
  )


_PREFIX_CACHE = {}


def _feature(name: str, values: np.ndarray) -> bytes:
  if _DTYPES.get(name) == "float32":
    packed = np.asarray(values, dtype="<f4").tobytes()
  else:
    packed = varints(values)
  key = (name, len(packed))
  prefix = _PREFIX_CACHE.get(key)
  if prefix is None:
    prefix = _PREFIX_CACHE.setdefault(key, _feature_prefix(name, len(packed)))
  return prefix + packed


def serialize_example(values: Dict[str, np.ndarray]) -> bytes:
  """Wire bytes of an Example with exactly the schema's features.

  Args:
    values: record name -> 1-D array (non-negative ints, or floats for
      masked_lm_weights), already padded to the schema's fixed lengths.
  """
  if set(values) != set(_ORDER):
    raise ValueError(
        f"features {sorted(values)} differ from the schema {sorted(_ORDER)}"
    )
  body = b"".join(_feature(name, values[name]) for name in _ORDER)
  return _length_delimited(_FIELD_1, body)


def serialize_int64_example(values: Dict[str, np.ndarray]) -> bytes:
  """Wire bytes of an Example of int64 lists (any names, in dict order).

  Args:
    values: feature name -> 1-D array of non-negative ints (any length).
  """
  for name in values:
    if name in _DTYPES:
      raise ValueError(f"{name!r} is a feature of the examples schema")
  body = b"".join(_feature(name, v) for name, v in values.items())
  return _length_delimited(_FIELD_1, body)
