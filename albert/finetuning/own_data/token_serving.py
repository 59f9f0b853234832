"""`TokenClassificationServingModule`: raw text in, a tag for every word out.

The SavedModel of `TokenClassificationTask`
(`albert/finetuning/own_data/token_classification.py`): the words as
training split them, tokenised in the graph, tagged on their first piece,
whole sentences or windows (`albert/finetuning/long_text.py`).
"""

from typing import Dict, Optional, Sequence

import tensorflow as tf
import tensorflow_text as tf_text

from albert.finetuning import long_text as long_text_lib
from albert.modeling.token_classifier import AlbertTokenClassifier
from albert.serving.preprocessor import Preprocessor
from official.core import export_base

OUTSIDE = "O"


class TokenClassificationServingModule(export_base.ExportModule):
  """Raw text -> a tag for every whitespace-separated word.

  Signature `serving_default` on `text` string [B]; words are split at
  whitespace (Python's `str.split()` set) and tokenised as in training.
  Outputs, padded to the longest text's word count W:
    `words` string [B, W] (""), `tags` string [B, W] (""),
    `scores` float32 [B, W], the probability of each tag (0),
    `start_char`, `end_char` int32 [B, W]: Unicode character offsets, so
      that `text[start_char:end_char]` in Python is the word (-1),
    `num_words` int32 [B];
    with `windows`, also `num_windows` int32 [B].
  Without `windows`, words past `seq_length - 2` pieces are tagged "O" with
  score 0; with them, every word the windows reach is tagged from the window
  giving its first piece the most context (as the task's predictions).
  """

  def __init__(
      self,
      model: AlbertTokenClassifier,
      preprocessor: Preprocessor,
      *,
      labels: Sequence[str],
      windows: Optional[long_text_lib.Windows] = None,
      name: str = "token_classification_serving",
  ):
    super().__init__(model, name=name)
    self.preprocessor = preprocessor
    self.labels = tuple(labels)
    self.windows = windows
    self._serve = tf.function(
        self._outputs,
        input_signature=[tf.TensorSpec([None], tf.string, name="text")],
        autograph=False,
    )

  def _outputs(self, text) -> Dict[str, tf.Tensor]:
    text = self.preprocessor.valid_utf8(text)  # words are returned as text
    words, starts, ends = tf_text.regex_split_with_offsets(
        text, self.preprocessor.whitespace_pattern
    )  # [B, (W)], byte offsets
    pieces = self.preprocessor.tokenize(words.flat_values)  # [N, (P)]
    counts = tf.cast(pieces.row_lengths(), tf.int32)  # [N]
    extra = {}
    if self.windows is None:
      found, word_logits = self._truncated(words, pieces, counts)
    else:
      found, word_logits, extra["num_windows"] = self._in_windows(
          words, pieces, counts
      )
    probabilities = tf.nn.softmax(word_logits, -1)  # [N, C]
    best = tf.argmax(probabilities, -1, output_type=tf.int32)
    tags = tf.where(found, tf.gather(tf.constant(self.labels), best), OUTSIDE)
    scores = tf.where(found, tf.reduce_max(probabilities, -1), 0.0)
    # Byte offsets -> character offsets.
    row = tf.cast(words.value_rowids(), tf.int32)
    texts = tf.gather(text, row)
    zeros = tf.zeros_like(row)

    def chars_before(offset):
      prefix = tf.strings.substr(texts, zeros, tf.cast(offset, tf.int32))
      return tf.strings.length(prefix, unit="UTF8_CHAR")

    start_char = chars_before(starts.flat_values)
    end_char = chars_before(ends.flat_values)

    def dense(values, pad):
      return words.with_flat_values(values).to_tensor(default_value=pad)

    return {
        "words": dense(words.flat_values, ""),
        "tags": dense(tags, ""),
        "scores": dense(scores, 0.0),
        "start_char": dense(start_char, -1),
        "end_char": dense(end_char, -1),
        "num_words": tf.cast(words.row_lengths(), tf.int32),
        **extra,
    }

  def _truncated(self, words, pieces, counts):
    """(found bool [N], logits [N, C]) of the words whose pieces fit in one
    input, whole words only."""
    # Pieces before each word, within its text.
    total = tf.cumsum(counts)
    row_start = tf.gather(
        tf.concat([[0], total], 0), tf.cast(words.row_starts(), tf.int32)
    )
    before = total - counts - tf.gather(row_start, words.value_rowids())
    keep = before + counts <= self.preprocessor.seq_length - 2  # [N]
    kept = tf.ragged.boolean_mask(
        words.with_flat_values(pieces), words.with_flat_values(keep)
    )  # [B, (W'), (P)]
    inputs = self.preprocessor.pack_trimmed([kept.merge_dims(1, 2)])
    logits = self.model(inputs, training=False)["logits"]  # [B, T, C]
    found = keep & (counts > 0)
    position = tf.where(found, before + 1, 0)  # [N]; [CLS] is 0
    row = tf.cast(words.value_rowids(), tf.int32)
    return found, tf.gather_nd(logits, tf.stack([row, position], -1))

  def _in_windows(self, words, pieces, counts):
    """(found bool [N], logits [N, C], num_windows int32 [B]): each word's
    logits at its first piece in the window of most context."""
    text_pieces = words.with_flat_values(pieces).merge_dims(1, 2)  # [B, (P)]
    index, _, num_windows = self.windows.positions(text_pieces)
    parts = index.with_flat_values(
        tf.gather(text_pieces.flat_values, index.flat_values)
    )
    inputs = self.preprocessor.pack_trimmed([parts])  # [W, T]
    logits = self.model(inputs, training=False)["logits"]  # [W, T, C]
    window, place = self.windows.max_context_positions(
        index, tf.size(pieces.flat_values, tf.int32)
    )
    # Each word's first piece; a word without pieces points past the end,
    # at a -1 appended to both.
    first = tf.where(
        counts > 0,
        tf.cast(pieces.row_starts(), tf.int32),
        tf.size(window),
    )
    word_window = tf.gather(tf.concat([window, [-1]], 0), first)
    word_place = tf.gather(tf.concat([place, [-1]], 0), first)
    found = word_window >= 0
    at = tf.stack(
        [tf.where(found, word_window, 0), tf.where(found, word_place + 1, 0)],
        -1,
    )  # +1: after [CLS]
    return found, tf.gather_nd(logits, at), num_windows

  def signatures(self):
    return {"serving_default": self._serve}
