"""`AlbertPreprocessor`: raw strings -> encoder inputs, in the TensorFlow graph.

The normalisation is the one `tools/create_pretraining_data.py` applies in
Python (`albert.text.tokenization.preprocess_text`), rebuilt from
TensorFlow and TF-Text ops so a SavedModel needs nothing else:

  0. bytes that are not UTF-8 -> U+FFFD each (`Preprocessor.valid_utf8`: as
     Python's `errors="replace"` decoding, so a request is answered, never
     refused for its encoding);
  1. whitespace runs (Python's `str.isspace` set) -> one space, ends stripped;
  2. NFKD;
  3. characters with a non-zero canonical combining class removed (the exact
     set is read from Python's `unicodedata` when the module is built);
  4. Unicode lower-casing (full mapping, final sigma included), if asked;
then SentencePiece (the model travels as an asset of the SavedModel).
"""

import functools
import sys
import unicodedata
from typing import Dict, List, Optional, Tuple

import tensorflow as tf
import tensorflow_text as tf_text

from albert.serving.packing import combine_segments
from official.io import files


@functools.lru_cache(maxsize=None)
def _code_point_class(predicate) -> str:
  """An RE2 character class of every code point where `predicate` holds.

  It reads all 1.1 million code points (about a second), so each class is
  built once per process: pass a named function (the cache key), not a new
  lambda per call.
  """
  ranges = []
  start = None
  for cp in range(sys.maxunicode + 2):
    inside = cp <= sys.maxunicode and predicate(chr(cp))
    if inside and start is None:
      start = cp
    elif not inside and start is not None:
      ranges.append((start, cp - 1))
      start = None
  parts = [
      f"\\x{{{a:x}}}" if a == b else f"\\x{{{a:x}}}-\\x{{{b:x}}}"
      for a, b in ranges
  ]
  return "[" + "".join(parts) + "]"


def _is_combining(c: str) -> bool:
  return unicodedata.combining(c) != 0


class Preprocessor(tf.Module):
  """Packs tokenized text as ALBERT's encoder expects; the tokenizer is the
  subclass's (`AlbertPreprocessor`: SentencePiece; `WordPiecePreprocessor`:
  a vocab.txt).

  A subclass sets `cls_id`, `sep_id`, `mask_id`, `pad_id`, `vocab_size`
  and provides `_tokenize`, `word_starts` and `piece_char_spans`.

  Args:
    seq_length: the longest packed input; longer input is truncated
      (round-robin between the two segments of a pair).
    do_lower_case: lower-case before tokenizing (as the data tool did).
    dynamic_length: pad each batch to its longest packed input (at most
      `seq_length`), so a short request costs what its tokens cost; False
      pads every batch to `seq_length` (TF Hub's preprocessing contract).
  """

  def __init__(
      self,
      seq_length: int,
      do_lower_case: bool,
      name: str,
      dynamic_length: bool = True,
  ):
    super().__init__(name=name)
    if seq_length < 3:
      raise ValueError(
          f"seq_length={seq_length} must be >= 3 ([CLS] x [SEP] [SEP])"
      )
    self.seq_length = seq_length
    self.do_lower_case = do_lower_case
    self.dynamic_length = dynamic_length
    # Ragged token ids: `tokenize` as a SavedModel function (not a
    # signature). It holds the bound method (a tf.function method would hold
    # a weak reference: `Preprocessor(...).tokenize(x)` would lose its object).
    self.tokenize_text = tf.function(
        self._tokenize,
        input_signature=[tf.TensorSpec([None], tf.string)],
        autograph=False,
    )

  def tokenize(self, text: tf.Tensor) -> tf.RaggedTensor:
    """string [B] -> int32 ragged [B, (tokens)] ids.

    One function per preprocessor, traced on first use: every signature
    that tokenizes calls it, so an export traces the tokenizer once rather
    than once per signature (the graphs' function inlining makes the call
    free when served)."""
    return self.tokenize_text(text)

  def _tokenize(self, text: tf.Tensor) -> tf.RaggedTensor:
    """`tokenize`'s body: the subclass's tokenizer."""
    raise NotImplementedError

  @staticmethod
  def valid_utf8(text: tf.Tensor) -> tf.Tensor:
    """string [B] -> the same, each byte sequence that is not UTF-8
    replaced by U+FFFD (the first step of every tokenizer's normalisation;
    serving modules that return parts of the input text apply it first)."""
    return tf.strings.unicode_transcode(
        text,
        input_encoding="UTF-8",
        output_encoding="UTF-8",
        errors="replace",
        replacement_char=0xFFFD,
    )

  def word_starts(self, ids: tf.Tensor) -> tf.Tensor:
    """int32 ids [N] -> bool [N]: the piece starts a word."""
    raise NotImplementedError

  def surface(self, ids: tf.Tensor) -> tf.Tensor:
    """int32 ids (any shape) -> their pieces' text, without the tokenizer's
    word mark (SentencePiece's leading space mark, WordPiece's `##`)."""
    raise NotImplementedError

  def tokenize_with_masks(self, text: tf.Tensor) -> tf.RaggedTensor:
    """Like `tokenize`, but each literal "[MASK]" becomes the [MASK] id."""
    parts = tf.strings.split(text, sep="[MASK]")  # [B, (parts)]
    tokens = self.tokenize(parts.flat_values)
    # Every part gets a trailing [MASK]; the one after each text's last part
    # is then dropped.
    masks = tf.fill([tokens.nrows(), 1], self.mask_id)
    tokens = tf.concat([tokens, masks], axis=1)  # [parts, (tokens) + 1]
    merged = parts.with_flat_values(tokens).merge_dims(1, 2)  # [B, (tokens)]
    return merged[:, :-1]

  def pack(
      self, segments: List[tf.RaggedTensor], seq_length=None
  ) -> Dict[str, tf.Tensor]:
    """[CLS] A [SEP] (B [SEP]), trimmed round-robin to `seq_length` (an int
    or int32 scalar tensor; default `self.seq_length`) and padded to it, or,
    when `seq_length` is not given and `dynamic_length` is set, to the
    longest packed input of the batch.

    Returns:
      int32 [B, T] `input_word_ids`, `input_mask`, `input_type_ids`.
    """
    budget = (self.seq_length if seq_length is None else seq_length) - 1
    budget -= len(segments)
    trimmed = tf_text.RoundRobinTrimmer(max_seq_length=budget).trim(segments)
    return self.pack_trimmed(trimmed, seq_length)

  def pack_trimmed(
      self, segments: List[tf.RaggedTensor], seq_length=None
  ) -> Dict[str, tf.Tensor]:
    """`pack` for segments already trimmed to fit (tasks with their own rule).

    Returns:
      int32 [B, T] `input_word_ids`, `input_mask`, `input_type_ids`; T is
      `seq_length`, else the batch's longest input (`dynamic_length`), else
      `self.seq_length`.
    """
    ids, type_ids = combine_segments(segments, self.cls_id, self.sep_id)
    if seq_length is None:
      seq_length = self.seq_length
      if self.dynamic_length:
        seq_length = self.longest(ids.row_lengths())
    word_ids, mask = tf_text.pad_model_inputs(
        ids, seq_length, pad_value=self.pad_id
    )
    type_ids, _ = tf_text.pad_model_inputs(type_ids, seq_length)
    return {
        "input_word_ids": tf.cast(word_ids, tf.int32),
        "input_mask": tf.cast(mask, tf.int32),
        "input_type_ids": tf.cast(type_ids, tf.int32),
    }

  @staticmethod
  def longest(lengths: tf.Tensor) -> tf.Tensor:
    """int32 scalar: the largest of `lengths` [B], 2 for an empty batch
    (the length of an empty text's [CLS] [SEP])."""
    floor = tf.constant([2], lengths.dtype)
    return tf.cast(tf.reduce_max(tf.concat([lengths, floor], 0)), tf.int32)

  def trim_to_longest(
      self, inputs: Dict[str, tf.Tensor]
  ) -> Dict[str, tf.Tensor]:
    """Packed [B, T] inputs cut after the last position any example uses
    (`input_mask`), when `dynamic_length` is set: fixed-length features
    (a `tf_example` request) then cost what their tokens cost."""
    if not self.dynamic_length:
      return inputs
    used = tf.reduce_sum(tf.cast(inputs["input_mask"], tf.int32), axis=1)
    length = self.longest(used)
    return {name: value[:, :length] for name, value in inputs.items()}

  @staticmethod
  def check_same_batch(**inputs: tf.Tensor) -> Tuple[tf.Tensor, ...]:
    """Fails (InvalidArgumentError) unless every input has the same batch size.

    Signatures take their inputs as separate [B, ...] tensors; without this
    check unequal ones crash inside TF-Text (the whole process) or silently
    drop examples.

    Returns:
      the inputs, in their order, each depending on the check: use these,
      so that nothing computed from them runs before it passes (in a graph,
      an op that does not depend on the check may run first).
    """
    (first, tensor), *rest = inputs.items()
    checks = [
        tf.debugging.assert_equal(
            tf.shape(other)[0],
            tf.shape(tensor)[0],
            message=f"{first} and {name} must hold the same number of "
            "examples",
        )
        for name, other in rest
    ]
    with tf.control_dependencies([c for c in checks if c is not None]):
      return tuple(tf.identity(value) for value in inputs.values())

  def __call__(
      self, text: tf.Tensor, second: Optional[tf.Tensor] = None
  ) -> Dict[str, tf.Tensor]:
    """One or two string [B] segments -> packed encoder inputs."""
    if second is None:
      return self.pack([self.tokenize(text)])
    text, second = self.check_same_batch(first=text, second=second)
    segments = [self.tokenize(text), self.tokenize(second)]
    return self.pack(segments)

  @tf.function(
      input_signature=[tf.TensorSpec([None], tf.string)], autograph=False
  )
  def preprocess(self, text):
    """Signature `serving_default`: one segment per example."""
    return self(text)

  @tf.function(
      input_signature=[tf.TensorSpec([None], tf.string)] * 2, autograph=False
  )
  def preprocess_pair(self, first, second):
    """Signature `pair`: two segments per example."""
    return self(first, second)

  def signatures(self):
    return {"serving_default": self.preprocess, "pair": self.preprocess_pair}


class AlbertPreprocessor(Preprocessor):
  """Tokenises text with a SentencePiece model and packs it.

  Args:
    spm_model_file: the SentencePiece model (with [CLS], [SEP], [MASK]).
    seq_length: length of the packed inputs; longer input is truncated
      (round-robin between the two segments of a pair).
    do_lower_case: lower-case before SentencePiece (as the data tool did).
    dynamic_length: `Preprocessor`'s.
  """

  def __init__(
      self,
      spm_model_file: str,
      seq_length: int = 128,
      do_lower_case: bool = True,
      name: str = "albert_preprocessor",
      dynamic_length: bool = True,
  ):
    super().__init__(seq_length, do_lower_case, name, dynamic_length)
    self.spm_model = tf.saved_model.Asset(spm_model_file)
    model_proto = files.read_bytes(spm_model_file, "SentencePiece model")
    self.tokenizer = tf_text.SentencepieceTokenizer(
        model=model_proto, out_type=tf.int32
    )
    ids = self.tokenizer.string_to_id(["[CLS]", "[SEP]", "[MASK]", "<pad>"])
    self.cls_id, self.sep_id, self.mask_id, self.pad_id = (
        int(i) for i in ids.numpy()
    )
    unk = int(self.tokenizer.string_to_id("<unk>").numpy())
    if unk in (self.cls_id, self.sep_id, self.mask_id):
      raise ValueError(
          f"{spm_model_file} lacks [CLS], [SEP] or [MASK]; train "
          "it with tools/train_sentencepiece.py"
      )
    # Runs of Python's `str.isspace` characters (what `str.split()` splits at).
    self.whitespace_pattern = _code_point_class(str.isspace) + "+"
    self._combining = _code_point_class(_is_combining)
    self._digit_comma = ".*" + _code_point_class(str.isdigit) + ","
    self.comma_id = int(self.tokenizer.string_to_id(",").numpy())
    self.vocab_size = int(self.tokenizer.vocab_size().numpy())

  def normalize(self, text: tf.Tensor) -> tf.Tensor:
    """string [B] -> normalised string [B] (steps 0-4 of the module doc)."""
    text = self.valid_utf8(text)
    text = tf.strings.regex_replace(text, self.whitespace_pattern, " ")
    text = tf.strings.regex_replace(text, "^ | $", "")
    text = tf_text.normalize_utf8(text, "NFKD")
    text = tf.strings.regex_replace(text, self._combining, "")
    if self.do_lower_case:
      text = tf.strings.lower(text, encoding="utf-8")
    return text

  def _tokenize(self, text: tf.Tensor) -> tf.RaggedTensor:
    """string [B] -> int32 ragged [B, (tokens)] SentencePiece ids."""
    return self._encode(self.normalize(text))

  def word_starts(self, ids: tf.Tensor) -> tf.Tensor:
    """A piece with SentencePiece's space mark starts a word."""
    return tf.strings.regex_full_match(
        self.tokenizer.id_to_string(ids), "\u2581.*"
    )

  def surface(self, ids: tf.Tensor) -> tf.Tensor:
    return tf.strings.regex_replace(
        self.tokenizer.id_to_string(ids), "^\u2581", ""
    )

  def piece_char_spans(self, words: tf.Tensor, pieces: tf.RaggedTensor):
    """Where each piece of `pieces = tokenize(words)` lies in its word.

    Args:
      words: string [N], words without whitespace.
      pieces: int32 ragged [N, (P)], `tokenize(words)`.

    Returns:
      (start, end): int32 ragged [N, (P)] Unicode-character offsets into the
      word, end exclusive; the rule of `SentencePieceTokenizer.
      piece_char_spans` (each character normalised on its own, owned by the
      piece covering the start of its normalised text; the whole word where
      the lengths disagree or a piece owns no character).
    """
    surface = tf.strings.regex_replace(
        self.tokenizer.id_to_string(pieces.flat_values), "^\u2581+", ""
    )
    piece_len = pieces.with_flat_values(
        tf.strings.length(surface, unit="UTF8_CHAR")
    )
    chars = tf.strings.unicode_split(words, "UTF-8")  # [N, (C)]
    char_len = chars.with_flat_values(
        tf.strings.length(self.normalize(chars.flat_values), unit="UTF8_CHAR")
    )
    num_chars = tf.cast(chars.row_lengths(), tf.int32)  # [N]
    num_pieces = tf.cast(pieces.row_lengths(), tf.int32)
    exact = tf.equal(
        tf.reduce_sum(piece_len, axis=1), tf.reduce_sum(char_len, axis=1)
    )
    # Doubled positions: a character of normalised length 0 sits half a
    # step before its position, with the piece before it.
    piece_end2 = 2 * _row_cumsum(piece_len)
    char_pos2 = 2 * (_row_cumsum(char_len) - char_len) - tf.cast(
        tf.equal(char_len, 0), tf.int32
    )
    owner = tf.searchsorted(
        piece_end2.to_tensor(default_value=tf.int32.max),
        char_pos2.to_tensor(),
        side="right",
        out_type=tf.int32,
    )  # [N, max C]
    owner = tf.RaggedTensor.from_tensor(owner, lengths=num_chars)
    char_word = owner.value_rowids()
    has_pieces = tf.gather(num_pieces, char_word) > 0
    total = tf.size(pieces.flat_values, out_type=tf.int32)
    segment = tf.where(
        has_pieces,
        tf.cast(tf.gather(pieces.row_starts(), char_word), tf.int32)
        + tf.minimum(owner.flat_values, tf.gather(num_pieces, char_word) - 1),
        total,  # characters of a word without pieces own nothing
    )
    index = tf.ragged.range(num_chars).flat_values
    first = tf.math.unsorted_segment_min(index, segment, total + 1)[:total]
    last = tf.math.unsorted_segment_max(index + 1, segment, total + 1)[:total]
    piece_word = pieces.value_rowids()
    ok = tf.gather(exact, piece_word) & (first <= last)
    start = tf.where(ok, first, 0)
    end = tf.where(ok, last, tf.gather(num_chars, piece_word))
    return pieces.with_flat_values(start), pieces.with_flat_values(end)

  def _encode(self, text: tf.Tensor) -> tf.RaggedTensor:
    """SentencePiece ids of normalised text, with the original's special case:
    a piece ending in a digit and a comma ("▁1,") becomes the digits' pieces
    and a "," piece (as `SentencePieceTokenizer.encode_lines` does)."""
    ids = self.tokenizer.tokenize(text)  # [B, (tokens)]
    flat = ids.flat_values
    pieces = self.tokenizer.id_to_string(flat)
    flagged = tf.strings.regex_full_match(pieces, self._digit_comma)
    flagged = flagged & (tf.strings.length(pieces, "UTF8_CHAR") > 1)
    which = tf.where(flagged)[:, 0]
    flagged_pieces = tf.gather(pieces, which)
    core = tf.strings.regex_replace(
        tf.strings.regex_replace(flagged_pieces, ",$", ""), "\u2581", ""
    )
    sub = self.tokenizer.tokenize(core)  # [F, (pieces of the digits)]
    first = self.tokenizer.id_to_string(sub[:, :1].flat_values)
    # Re-encoding adds a leading space mark; keep it only if the piece had one.
    fix = ~tf.strings.regex_full_match(
        flagged_pieces, "\u2581.*"
    ) & tf.strings.regex_full_match(first, "\u2581.*")
    bare = tf.strings.regex_replace(first, "^\u2581", "")
    keep_first = ~(fix & tf.equal(bare, ""))
    first_id = tf.where(
        fix, self.tokenizer.string_to_id(bare), sub[:, :1].flat_values
    )
    first_row = tf.RaggedTensor.from_row_lengths(
        tf.boolean_mask(first_id, keep_first), tf.cast(keep_first, tf.int64)
    )
    commas = tf.fill([tf.shape(which)[0], 1], self.comma_id)
    replaced = tf.concat([first_row, sub[:, 1:], commas], axis=1)  # [F, (k)]
    # Row i of the result: [id_i], or its replacement when piece i is flagged.
    table = tf.concat(
        [tf.RaggedTensor.from_tensor(flat[:, tf.newaxis]), replaced], axis=0
    )
    rank = tf.cumsum(tf.cast(flagged, tf.int64)) - 1
    index = tf.where(
        flagged,
        tf.size(flat, tf.int64) + rank,
        tf.range(tf.size(flat, tf.int64)),
    )
    return ids.with_flat_values(tf.gather(table, index)).merge_dims(1, 2)


def _row_cumsum(values: tf.RaggedTensor) -> tf.RaggedTensor:
  """Inclusive cumulative sum along each row of a 2-D ragged tensor."""
  flat = tf.cumsum(values.flat_values)
  before = tf.concat([tf.zeros([1], flat.dtype), flat], 0)
  row_base = tf.gather(before, values.row_starts())
  return values.with_flat_values(
      flat - tf.gather(row_base, values.value_rowids())
  )
