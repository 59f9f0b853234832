"""`HubPreprocessingModule`: the `preprocessing` SavedModel, TF Hub style.

TF Hub's BERT-family text preprocessors expose two callables besides their
signatures, and `hub.KerasLayer` wraps either:

  tokenize(strings [B]) -> int32 ragged [B, (words), (pieces)]
  tokenize.get_special_tokens_dict() -> vocab_size, start_of_sequence_id,
      end_of_segment_id, padding_id, mask_id (int32 scalars)
  bert_pack_inputs([segment, ...], seq_length=N) -> input_word_ids,
      input_mask, input_type_ids, int32 [B, N]

A "word" here is what SentencePiece starts with its space mark "▁": the
whole text is encoded at once (exactly as training data was) and the pieces
are grouped at each mark, so flattening the words gives the same ids as
`AlbertPreprocessor.tokenize`. `bert_pack_inputs` takes 1 or 2 segments,
ragged [B, (tokens)] or [B, (words), (pieces)], trims them round-robin to fit
(as the original `_truncate_seq_pair`), and packs `[CLS] A [SEP] (B [SEP])`.
`seq_length` is a tensor argument: any length up to the model's position
table works without retracing.
"""

from typing import Dict, List, Sequence

import tensorflow as tf

from albert.serving.preprocessor import Preprocessor

MAX_SEGMENTS = 2


class HubPreprocessingModule(tf.Module):
  """The exported preprocessing: TF Hub callables and the fixed signatures.

  Signatures (`seq_length` fixed at export): `serving_default` (text) and
  `pair` (first, second), as `AlbertPreprocessor`.
  """

  def __init__(
      self,
      preprocessor: Preprocessor,
      name: str = "albert_hub_preprocessing",
  ):
    super().__init__(name=name)
    self.preprocessor = preprocessor
    self.tokenize = _Tokenize(preprocessor)
    # Flat pieces [B, (tokens)], as before the word grouping.
    self.tokenize_text = preprocessor.tokenize_text
    # The packing itself is traced once per segment count and seq_length
    # form; the ragged_rank 2 forms merge their words and call it.
    self._pack = tf.function(self._pack_pieces, autograph=False)
    self.bert_pack_inputs = tf.function(self._bert_pack_inputs, autograph=False)
    # Traced now, so that the SavedModel serves every supported input form.
    for ragged_rank in (1, 2):
      shape = [None] * (ragged_rank + 1)
      segment = tf.RaggedTensorSpec(shape, tf.int32, ragged_rank=ragged_rank)
      for count in range(1, MAX_SEGMENTS + 1):
        self.bert_pack_inputs.get_concrete_function([segment] * count)
        self.bert_pack_inputs.get_concrete_function(
            [segment] * count, tf.TensorSpec([], tf.int32)
        )

  def _bert_pack_inputs(
      self, segments: List[tf.RaggedTensor], seq_length=None
  ) -> Dict[str, tf.Tensor]:
    """1 or 2 tokenized segments -> packed int32 [B, seq_length] inputs
    (seq_length: the export's when not given)."""
    segments = [
        s.merge_dims(1, 2) if s.ragged_rank == 2 else s for s in segments
    ]
    if seq_length is None:
      return self._pack(segments)
    return self._pack(segments, seq_length)

  def _pack_pieces(
      self, segments: List[tf.RaggedTensor], seq_length=None
  ) -> Dict[str, tf.Tensor]:
    """`bert_pack_inputs` of segments [B, (tokens)]."""
    if seq_length is None:
      seq_length = self.preprocessor.seq_length
    if not 1 <= len(segments) <= MAX_SEGMENTS:
      raise ValueError(
          f"bert_pack_inputs takes 1 or 2 segments, not {len(segments)}"
      )
    checks = [
        tf.debugging.assert_equal(
            other.nrows(),
            segments[0].nrows(),
            message="bert_pack_inputs: segments must hold the same examples",
        )
        for other in segments[1:]
    ]
    seq_length = tf.cast(seq_length, tf.int32)
    checks.append(
        tf.debugging.assert_greater_equal(
            seq_length,
            len(segments) + 2,
            message="bert_pack_inputs: seq_length too small for [CLS] and "
            "[SEP]s",
        )
    )
    # The packing's inputs depend on the checks: TF-Text's trimmer aborts
    # the process on segments of unequal batches.
    with tf.control_dependencies(checks):
      segments = [
          s.with_flat_values(tf.identity(s.flat_values)) for s in segments
      ]
      seq_length = tf.identity(seq_length)
    return self.preprocessor.pack(segments, seq_length)

  def signatures(self) -> Dict[str, Sequence]:
    return self.preprocessor.signatures()


class _Tokenize(tf.Module):
  """`tokenize`: callable on strings [B], with `get_special_tokens_dict`."""

  def __init__(self, preprocessor: Preprocessor):
    super().__init__(name="tokenize")
    self._preprocessor = preprocessor
    self.__call__ = tf.function(
        self._word_pieces,
        input_signature=[tf.TensorSpec([None], tf.string)],
        autograph=False,
    )

  def _word_pieces(self, text: tf.Tensor) -> tf.RaggedTensor:
    """strings [B] -> int32 ragged [B, (words), (pieces)]."""
    ids = self._preprocessor.tokenize(text)  # [B, (tokens)]
    flat = ids.flat_values
    marked = self._preprocessor.word_starts(flat)
    # Each text's first piece starts a word even without a word-start mark.
    rows = ids.value_rowids()
    position = tf.range(tf.size(flat, tf.int64)) - tf.gather(
        ids.row_starts(), rows
    )
    starts = marked | tf.equal(position, 0)
    words = tf.RaggedTensor.from_row_starts(
        flat, tf.where(starts)[:, 0], validate=False
    )  # [W, (pieces)]
    words_per_text = tf.math.unsorted_segment_sum(
        tf.cast(starts, tf.int64), rows, ids.nrows()
    )
    return tf.RaggedTensor.from_row_lengths(
        words, words_per_text, validate=False
    )

  @tf.function(input_signature=[], autograph=False)
  def get_special_tokens_dict(self) -> Dict[str, tf.Tensor]:
    """The ids `bert_pack_inputs` and masked-LM callers need, as TF Hub's
    BERT preprocessors give them."""
    p = self._preprocessor
    ids = {
        "vocab_size": p.vocab_size,
        "start_of_sequence_id": p.cls_id,
        "end_of_segment_id": p.sep_id,
        "padding_id": p.pad_id,
        "mask_id": p.mask_id,
    }
    return {k: tf.cast(v, tf.int32) for k, v in ids.items()}
