"""`WordPiecePreprocessor`: raw strings -> encoder inputs with a vocab.txt, in
the TensorFlow graph.

The Python tokenizer (`albert.text.wordpiece`, the original's FullTokenizer),
rebuilt from TensorFlow and TF-Text ops; the character classes are read from
Python's `unicodedata` when the module is built, so graph and Python agree:
  1. NUL, U+FFFD and control characters removed; whitespace -> space;
  2. if asked: lower-casing (full mapping, final sigma included), NFD,
     combining marks (Mn) removed;
  3. split at whitespace, every punctuation character and CJK ideograph
     kept as a word of its own (`tf_text.regex_split`);
  4. a word longer than 200 characters becomes [UNK]; the others are split
     into the longest vocabulary pieces (`tf_text.WordpieceTokenizer`, `##`
     continuations, [UNK] for a word without a split).
The vocabulary travels as an asset of the SavedModel.
"""

import tensorflow as tf
import tensorflow_text as tf_text

from albert.serving.preprocessor import AlbertPreprocessor
from albert.serving.preprocessor import Preprocessor
from albert.serving.preprocessor import _code_point_class
from albert.serving.preprocessor import _row_cumsum
from albert.text import tokenizers
from albert.text import wordpiece


def _is_dropped(c: str) -> bool:
  return ord(c) in (0, 0xFFFD) or wordpiece._is_control(c)


def _is_split(c: str) -> bool:
  return wordpiece._is_punctuation(c) or wordpiece.is_cjk(c)


class WordPiecePreprocessor(Preprocessor):
  """Tokenises text with a WordPiece vocabulary and packs it.

  Args:
    vocab_file: the vocab.txt (with [UNK], [CLS], [SEP], [MASK]).
    seq_length: length of the packed inputs.
    do_lower_case: lower-case and strip accents (as the data tool did).
    dynamic_length: `Preprocessor`'s.
  """

  def __init__(
      self,
      vocab_file: str,
      seq_length: int = 128,
      do_lower_case: bool = True,
      name: str = "wordpiece_preprocessor",
      dynamic_length: bool = True,
  ):
    super().__init__(seq_length, do_lower_case, name, dynamic_length)
    python = wordpiece.WordPieceTokenizer.from_file(vocab_file, do_lower_case)
    self.vocab = tf.saved_model.Asset(vocab_file)
    self.table = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(
            self.vocab,
            tf.string,
            tf.lookup.TextFileIndex.WHOLE_LINE,
            tf.int64,
            tf.lookup.TextFileIndex.LINE_NUMBER,
        ),
        default_value=-1,
        # Unnamed: a named table takes its name from the asset's repr, a memory
        # address, and a later table whose asset reuses the address (a
        # loaded SavedModel keeping the first alive) would silently share it.
        experimental_is_anonymous=True,
    )
    self.wordpiece = tf_text.WordpieceTokenizer(
        self.table,
        suffix_indicator=wordpiece.CONTINUATION,
        # Bytes; words over MAX_WORD_CHARS characters are [UNK] already.
        max_bytes_per_word=4 * wordpiece.MAX_WORD_CHARS,
        token_out_type=tf.int64,
        unknown_token=wordpiece.UNK,
    )
    self.cls_id, self.sep_id, self.mask_id, self.unk_id = (
        python.cls_id,
        python.sep_id,
        python.mask_id,
        python.unk_id,
    )
    self.pad_id = python.piece_to_id(wordpiece.PAD)
    if self.pad_id == self.unk_id:
      self.pad_id = 0  # a vocabulary without [PAD]: padding is masked anyway
    self.vocab_size = python.vocab_size
    self.is_word_start = tf.constant(python.is_word_start, tf.bool)  # [V]
    self.pieces = tf.constant(python.pieces)  # string [V]
    self._drop = _code_point_class(_is_dropped)
    self._space = _code_point_class(wordpiece._is_whitespace)
    split = _code_point_class(_is_split)
    self._delimiters = f"\\s+|{split}"
    self._kept = split

  def normalize(self, text: tf.Tensor) -> tf.Tensor:
    """string [B] -> normalised string [B] (steps 1-2 of the module doc),
    after `valid_utf8`."""
    text = self.valid_utf8(text)
    text = tf.strings.regex_replace(text, self._drop, "")
    text = tf.strings.regex_replace(text, self._space, " ")
    if self.do_lower_case:
      text = tf.strings.lower(text, encoding="utf-8")
      text = tf_text.normalize_utf8(text, "NFD")
      text = tf.strings.regex_replace(text, r"\p{Mn}", "")
    return text

  def words(self, text: tf.Tensor) -> tf.RaggedTensor:
    """normalised string [B] -> string ragged [B, (words)] (step 3)."""
    return tf_text.regex_split(text, self._delimiters, self._kept)

  def _tokenize(self, text: tf.Tensor) -> tf.RaggedTensor:
    """string [B] -> int32 ragged [B, (tokens)] WordPiece ids."""
    words = self.words(self.normalize(text))  # [B, (W)]
    long = (
        tf.strings.length(words.flat_values, unit="UTF8_CHAR")
        > wordpiece.MAX_WORD_CHARS
    )
    # Not in any vocabulary (it holds no NUL): WordPiece makes it [UNK].
    flat = tf.where(long, "\0", words.flat_values)
    pieces = self.wordpiece.tokenize(flat)  # [N, (P)]
    return tf.cast(words.with_flat_values(pieces).merge_dims(1, 2), tf.int32)

  def piece_char_spans(self, words: tf.Tensor, pieces: tf.RaggedTensor):
    """Where each piece of `pieces = tokenize(words)` lies in its word.

    Args:
      words: string [N], words without whitespace.
      pieces: int32 ragged [N, (P)], `tokenize(words)`.

    Returns:
      (start, end): int32 ragged [N, (P)] Unicode-character offsets into the
      word, end exclusive; the rule of `WordPieceTokenizer.piece_char_spans`:
      each character normalised on its own covers a stretch of the
      normalised word; a piece gets the characters its stretch touches (and
      the marks right after them), an [UNK] its whole basic token. Where
      the characters normalised one by one do not spell the normalised word
      (a context-dependent lower-casing, e.g. a final sigma), the whole word.
    """
    chars = tf.strings.unicode_split(words, "UTF-8")  # [N, (C)]
    char_text = self.normalize(chars.flat_values)
    char_len = chars.with_flat_values(
        tf.strings.length(char_text, unit="UTF8_CHAR")
    )  # [N, (C)]
    normalized = self.normalize(words)  # [N]
    exact = tf.equal(
        tf.strings.reduce_join(chars.with_flat_values(char_text), axis=1),
        normalized,
    )
    tokens, token_begin, _ = tf_text.regex_split_with_offsets(
        normalized, self._delimiters, self._kept
    )  # [N, (T)], byte offsets into the normalised word
    long = (
        tf.strings.length(tokens.flat_values, unit="UTF8_CHAR")
        > wordpiece.MAX_WORD_CHARS
    )
    flat = tf.where(long, "\0", tokens.flat_values)
    _, piece_begin, piece_end = self.wordpiece.tokenize_with_offsets(flat)
    # Byte offsets -> character offsets in the normalised word.
    word_of_token = tokens.value_rowids()
    token_text = tf.gather(normalized, word_of_token)

    def to_chars(text, byte_offsets):
      return tf.strings.length(
          tf.strings.substr(text, tf.zeros_like(byte_offsets), byte_offsets),
          unit="UTF8_CHAR",
      )

    token_start = to_chars(token_text, token_begin.flat_values)  # [T_all]
    piece_token = piece_begin.value_rowids()
    start_in_token = to_chars(
        tf.gather(flat, piece_token), piece_begin.flat_values
    )
    end_in_token = to_chars(tf.gather(flat, piece_token), piece_end.flat_values)
    piece_word = tf.gather(word_of_token, piece_token)
    first = tf.gather(token_start, piece_token) + tf.cast(
        start_in_token, tf.int32
    )
    last = tf.gather(token_start, piece_token) + tf.cast(
        end_in_token, tf.int32
    )  # [P_all] stretch [first, last) of the normalised word
    ends = _row_cumsum(char_len)  # [N, (C)]: end of each character's stretch
    ends_dense = ends.to_tensor(default_value=tf.int32.max)
    word_ends = tf.gather(ends_dense, piece_word)  # [P_all, max C]
    start = tf.searchsorted(word_ends, first[:, tf.newaxis], side="right")
    last_char = tf.searchsorted(
        word_ends, tf.maximum(last - 1, first)[:, tf.newaxis], side="right"
    )  # [P_all, 1]
    # Marks (characters of length 0) right after the piece's last character.
    num_chars = tf.cast(chars.row_lengths(), tf.int32)
    positive = chars.with_flat_values(
        tf.cast(char_len.flat_values > 0, tf.int32)
    )
    next_real = _next_true(positive)  # [N, (C)]: first j >= k with length > 0
    padded = tf.concat(
        [
            next_real.to_tensor(default_value=0),
            tf.zeros([tf.shape(num_chars)[0], 1], tf.int32),
        ],
        axis=1,
    )
    after = tf.minimum(last_char[:, 0] + 1, tf.gather(num_chars, piece_word))
    end = tf.gather_nd(
        padded, tf.stack([tf.cast(piece_word, tf.int32), after], axis=1)
    )
    end = tf.where(
        after >= tf.gather(num_chars, piece_word),
        tf.gather(num_chars, piece_word),
        end,
    )
    ok = tf.gather(exact, piece_word)
    start = tf.where(ok, tf.cast(start[:, 0], tf.int32), 0)
    end = tf.where(ok, end, tf.gather(num_chars, piece_word))
    return pieces.with_flat_values(start), pieces.with_flat_values(end)

  def word_starts(self, ids: tf.Tensor) -> tf.Tensor:
    """A piece that does not begin with `##` starts a word."""
    return tf.gather(self.is_word_start, ids)

  def surface(self, ids: tf.Tensor) -> tf.Tensor:
    return tf.strings.regex_replace(
        tf.gather(self.pieces, ids), "^" + wordpiece.CONTINUATION, ""
    )


def _next_true(flags: tf.RaggedTensor) -> tf.RaggedTensor:
  """int32 0/1 ragged [N, (C)] -> for each k the first j >= k of its row
  with flags[j] == 1, or the row's length."""
  lengths = tf.cast(flags.row_lengths(), tf.int32)
  dense = flags.to_tensor(default_value=1)  # past the end counts as true
  width = tf.shape(dense)[1]
  index = tf.broadcast_to(tf.range(width), tf.shape(dense))
  candidate = tf.where(dense > 0, index, width)
  # Suffix minimum along each row.
  suffix = tf.reverse(
      tf.scan(
          tf.minimum,
          tf.transpose(tf.reverse(candidate, axis=[1])),
      ),
      axis=[0],
  )
  suffix = tf.minimum(tf.transpose(suffix), lengths[:, tf.newaxis])
  return tf.RaggedTensor.from_tensor(suffix, lengths=lengths)


def make_preprocessor(
    *,
    spm_model_file=None,
    vocab_file=None,
    seq_length: int = 128,
    do_lower_case: bool = True,
    dynamic_length: bool = True,
) -> Preprocessor:
  """The preprocessor of --spm_model_file, else of --vocab_file (WordPiece),
  as the original chooses (`dynamic_length`: `Preprocessor`'s)."""
  if tokenizers.choose(spm_model_file, vocab_file) == tokenizers.SENTENCEPIECE:
    return AlbertPreprocessor(
        spm_model_file, seq_length, do_lower_case, dynamic_length=dynamic_length
    )
  return WordPiecePreprocessor(
      vocab_file, seq_length, do_lower_case, dynamic_length=dynamic_length
  )
