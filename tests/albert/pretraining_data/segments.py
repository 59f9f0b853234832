"""Documents built from segment lists, as the pretraining-data tests write
them."""

from typing import Sequence

from albert.pretraining_data.instances import Document


def document_from_segments(segments: Sequence[Sequence[int]]) -> Document:
  """A `Document` of `segments` (token id lists or arrays), in order."""
  return Document.from_lengths(
      [t for s in segments for t in s], [len(s) for s in segments]
  )
