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
from albert.text import tokenizers
from albert.text import wordpiece


class WordPiecePreprocessor(Preprocessor):
  """Tokenises text with a WordPiece vocabulary and packs it.

  Args:
    vocab_file: the vocab.txt (with [UNK], [CLS], [SEP], [MASK]).
    seq_length: length of the packed inputs.
    do_lower_case: lower-case and strip accents (as the data tool did).
  """

  def __init__(
      self,
      vocab_file: str,
      seq_length: int = 128,
      do_lower_case: bool = True,
      name: str = "wordpiece_preprocessor",
  ):
    super().__init__(seq_length, do_lower_case, name)
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
    self._drop = _code_point_class(
        lambda c: ord(c) in (0, 0xFFFD) or wordpiece._is_control(c)
    )
    self._space = _code_point_class(wordpiece._is_whitespace)
    split = _code_point_class(
        lambda c: wordpiece._is_punctuation(c) or wordpiece.is_cjk(c)
    )
    self._delimiters = f"\\s+|{split}"
    self._kept = split

  def normalize(self, text: tf.Tensor) -> tf.Tensor:
    """string [B] -> normalised string [B] (steps 1-2 of the module doc)."""
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

  def tokenize(self, text: tf.Tensor) -> tf.RaggedTensor:
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

  def word_starts(self, ids: tf.Tensor) -> tf.Tensor:
    """A piece that does not begin with `##` starts a word."""
    return tf.gather(self.is_word_start, ids)

  def surface(self, ids: tf.Tensor) -> tf.Tensor:
    return tf.strings.regex_replace(
        tf.gather(self.pieces, ids), "^" + wordpiece.CONTINUATION, ""
    )


def make_preprocessor(
    *,
    spm_model_file=None,
    vocab_file=None,
    seq_length: int = 128,
    do_lower_case: bool = True,
) -> Preprocessor:
  """The preprocessor of --spm_model_file, else of --vocab_file (WordPiece),
  as the original chooses."""
  if tokenizers.choose(spm_model_file, vocab_file) == tokenizers.SENTENCEPIECE:
    return AlbertPreprocessor(spm_model_file, seq_length, do_lower_case)
  return WordPiecePreprocessor(vocab_file, seq_length, do_lower_case)
