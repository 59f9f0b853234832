"""`SquadServingModule`: raw question and context in, answer text out.

Everything runs in the TensorFlow graph (only TF and TF-Text ops), as
`SquadTask` prepares data in Python:

  1. the context is split into words on BERT's SQuAD whitespace
     (space, tab, CR, LF, U+202F);
  2. each word is normalised and SentencePiece-encoded on its own (pieces
     never cross whitespace), which gives the token -> word map;
  3. `[CLS] question [SEP] window [SEP]` for every `doc_stride` window of
     the context, the question cut to `max_query_length` tokens (the windows
     of `squad_features`);
  4. the best span of at most `max_answer_length` context tokens, end >=
     start, starting where its window has the token's maximum context: v1.1
     by start + end logit over all pairs, v2.0 over the 5x5 beam by start +
     end log-probability; then the best over the question's windows (v2.0:
     null odds = the minimum answerability logit over them);
  5. the answer is the context's own characters from the span's first
     token to its last (each token's characters in its word as
     `SentencePieceTokenizer.piece_char_spans`, the same as the Python
     path), located by `start_char`/`end_char`.
"""

from typing import Dict

import tensorflow as tf
import tensorflow_text as tf_text

from albert.serving.preprocessor import Preprocessor
from albert.finetuning.squad.postprocess import NO_SPAN_ODDS
from official.core import export_base

_TEXT = tf.TensorSpec([None], tf.string)
_WHITESPACE = "[ \t\r\n\u202f]+"


class SquadServingModule(export_base.ExportModule):
  """Signature `serving_default(question [B], context [B])` returns:

  answer: string [B], the best span's characters of the context ("" if
    none);
  start_word, end_word: int32 [B], the span's first and last word (0-based
    index in the whitespace-split context; -1 if none);
  start_char, end_char: int32 [B], the span in the context in Unicode
    characters, end exclusive: in Python, `context[start_char:end_char]`
    is the answer (-1 if none);
  score: float32 [B], the span's start + end logit (v1.1) or log-prob
    (v2.0);
  v2.0 only: is_impossible: bool [B], null_odds >= null_threshold (then
    `answer` is ""), and null_odds: float32 [B], the smallest answerability
    logit over the windows (NO_SPAN_ODDS when no window has a valid span).
  """

  def __init__(
      self,
      model,
      preprocessor: Preprocessor,
      *,
      max_query_length: int,
      max_answer_length: int,
      doc_stride: int,
      null_threshold: float = 0.0,
      name: str = "squad_serving",
  ):
    super().__init__(model, name=name)
    self.preprocessor = preprocessor
    self.max_query_length = max_query_length
    self.max_answer_length = max_answer_length
    self.doc_stride = doc_stride
    self.null_threshold = float(null_threshold)
    self.version = model.version

  def _context_tokens(self, context):
    """Words [B, (W)] and their byte offsets [B, (W)] (begin, end), tokens
    [B, (N)], each token's word [B, (N)] and its characters in that word
    (start, end exclusive; [B, (N)] each)."""
    p = self.preprocessor
    words, begin, end = tf_text.regex_split_with_offsets(
        context, _WHITESPACE
    )  # [B, (W)] each
    pieces = p.tokenize(words.flat_values)  # [N_words, (P)]
    doc = words.with_flat_values(pieces).merge_dims(1, 2)  # [B, (N)]
    word_index = tf.ragged.range(words.row_lengths()).flat_values
    token_word = doc.with_flat_values(
        tf.repeat(word_index, pieces.row_lengths())
    )  # [B, (N)]
    char_start, char_end = p.piece_char_spans(words.flat_values, pieces)
    token_chars = tuple(
        doc.with_flat_values(c.flat_values) for c in (char_start, char_end)
    )
    return (words, begin, end), doc, token_word, token_chars

  def _windows(self, question, context):
    """The windows of every example, flattened to W rows.

    Returns:
      inputs: packed int32 [W, T] model inputs with `paragraph_mask`;
      window_example: int32 [W], the example of each window;
      words: (string words [B, (W)], their begin and end byte offsets);
      position_word: int32 [W, T], the context word at each position (-1
        outside the context);
      position_chars: (start, end) int32 [W, T] each, the characters of
        the token at each position within its word (end exclusive);
      position_is_max: bool [W, T], the window gives the token at this
        position its maximum context (BERT's `_check_is_max_context`).
    """
    p = self.preprocessor
    words, doc, token_word, token_chars = self._context_tokens(context)
    query = p.tokenize(question)[:, : self.max_query_length]
    budget = p.seq_length - 3 - query.row_lengths()  # [B]
    n = doc.row_lengths()  # [B]
    # Windows start every min(budget, doc_stride) tokens until one reaches
    # the end of the context (one empty window for an empty context).
    step = tf.minimum(budget, self.doc_stride)
    count = tf.where(
        n <= budget, tf.ones_like(n), (n - budget + step - 1) // step + 1
    )  # [B]
    example = tf.repeat(tf.range(tf.size(n, tf.int64)), count)  # [W]
    start = tf.ragged.range(count).flat_values * tf.gather(step, example)
    length = tf.minimum(
        tf.gather(budget, example), tf.gather(n, example) - start
    )  # [W]
    first = tf.gather(doc.row_starts(), example) + start  # into flat tokens
    take = tf.ragged.range(first, first + length)  # [W, (length)]
    window_doc = take.with_flat_values(
        tf.gather(doc.flat_values, take.flat_values)
    )
    window_word, window_start, window_end = (
        take.with_flat_values(tf.gather(t.flat_values, take.flat_values))
        for t in (token_word,) + token_chars
    )
    # Max context: min(tokens left, tokens right) + 0.01 * window length,
    # compared over every window holding the token.
    j = tf.ragged.range(length)  # [W, (length)]
    context_score = take.with_flat_values(
        tf.cast(
            tf.minimum(
                j.flat_values, tf.repeat(length, length) - 1 - j.flat_values
            ),
            tf.float32,
        )
        + 0.01 * tf.cast(tf.repeat(length, length), tf.float32)
    )
    best = tf.math.unsorted_segment_max(
        context_score.flat_values,
        take.flat_values,
        tf.size(doc.flat_values, tf.int64),
    )
    window_is_max = take.with_flat_values(
        context_score.flat_values >= tf.gather(best, take.flat_values)
    )
    window_query = tf.gather(query, example)
    inputs = p.pack_trimmed([window_query, window_doc])
    # Context position t holds window token t - offset.
    offset = window_query.row_lengths() + 2  # [W]
    # T: the longest window (the preprocessor's dynamic length), or
    # seq_length.
    width = tf.shape(inputs["input_word_ids"], out_type=tf.int64)[1]
    positions = tf.range(width, dtype=tf.int64)[tf.newaxis]  # [1, T]
    in_doc = (positions >= offset[:, tf.newaxis]) & (
        positions < (offset + length)[:, tf.newaxis]
    )  # [W, T]
    index = tf.clip_by_value(positions - offset[:, tf.newaxis], 0, width - 1)

    def at_positions(ragged, default):
      padded = ragged.to_tensor(
          default_value=default, shape=tf.stack([ragged.nrows(), width])
      )
      return tf.where(in_doc, tf.gather(padded, index, batch_dims=1), default)

    inputs["paragraph_mask"] = tf.cast(in_doc, tf.int32)
    return (
        inputs,
        tf.cast(example, tf.int32),
        words,
        tf.cast(at_positions(window_word, -1), tf.int32),
        tuple(at_positions(w, 0) for w in (window_start, window_end)),
        at_positions(window_is_max, False),
    )

  @staticmethod
  def _char_offset(context, byte_offsets, word, found):
    """Unicode-character offset into `context` [B] of byte_offsets[b, word[b]]
    (-1 where not `found`)."""
    values = tf.concat(
        [tf.cast(byte_offsets.flat_values, tf.int32), [0]], 0
    )  # one 0 at the end for the examples without a span
    row_starts = tf.cast(byte_offsets.row_starts(), tf.int32)
    flat = tf.gather(
        values, tf.where(found, row_starts + word, tf.size(values) - 1)
    )  # [B]
    prefix = tf.strings.substr(context, tf.zeros_like(flat), flat)  # [B]
    return tf.where(found, tf.strings.length(prefix, unit="UTF8_CHAR"), -1)

  def _best_pair(
      self, starts, ends, start_scores, end_scores, start_ok, end_ok
  ):
    """Best valid (start, end, score) among [W, N] candidate pairs."""
    valid = (
        tf.gather(start_ok, starts, batch_dims=1)
        & tf.gather(end_ok, ends, batch_dims=1)
        & (ends >= starts)
        & (ends - starts < self.max_answer_length)
    )
    scores = tf.where(valid, start_scores + end_scores, float("-inf"))
    best = tf.argmax(scores, axis=-1, output_type=tf.int32)  # [W]
    found = tf.reduce_any(valid, axis=-1)
    pick = lambda x: tf.gather(x, best, batch_dims=1)
    return pick(starts), pick(ends), pick(scores), found

  @tf.function(input_signature=[_TEXT, _TEXT], autograph=False)
  def serve(self, question, context):
    question, context = self.preprocessor.check_same_batch(
        question=question, context=context
    )
    # The answer is the context's own characters: the same valid text.
    question, context = map(self.preprocessor.valid_utf8, (question, context))
    (inputs, example, words, position_word, position_chars, position_is_max) = (
        self._windows(question, context)
    )
    outputs = self.model(inputs, training=False)
    is_context = position_word >= 0  # [W, T]
    t = tf.shape(position_word)[1]
    if self.version == "1.1":
      grid = tf.range(t * t)  # every (start, end) pair
      starts = tf.broadcast_to(grid // t, [tf.shape(is_context)[0], t * t])
      ends = tf.broadcast_to(grid % t, tf.shape(starts))
      start_scores = tf.gather(outputs["start_logits"], starts, batch_dims=1)
      end_scores = tf.gather(outputs["end_logits"], ends, batch_dims=1)
    else:
      k1, k2 = self.model.start_n_top, self.model.end_n_top
      starts = tf.repeat(outputs["start_top_index"], k2, axis=1)  # [W, K1*K2]
      start_scores = tf.repeat(outputs["start_top_log_probs"], k2, axis=1)
      ends = tf.reshape(outputs["end_top_index"], [-1, k1 * k2])
      end_scores = tf.reshape(outputs["end_top_log_probs"], [-1, k1 * k2])
    start, end, score, found = self._best_pair(
        starts,
        ends,
        start_scores,
        end_scores,
        is_context & position_is_max,
        is_context,
    )  # [W] each
    # The best window of each example (the first one on ties).
    batch = tf.shape(question)[0]
    score = tf.where(found, score, float("-inf"))
    best_score = tf.math.unsorted_segment_max(score, example, batch)  # [B]
    window = tf.range(tf.size(example))
    is_best = found & (score >= tf.gather(best_score, example))
    chosen = tf.math.unsorted_segment_min(
        tf.where(is_best, window, tf.int32.max), example, batch
    )  # [B]
    found = chosen < tf.int32.max
    chosen = tf.where(found, chosen, 0)
    pick = lambda x: tf.gather(x, chosen)
    result = {}
    if self.version == "2.0":
      null_odds = tf.math.unsorted_segment_min(
          outputs["cls_logits"], example, batch
      )  # [B]
      # No span anywhere: certainly unanswerable, as the Python path says.
      null_odds = tf.where(found, null_odds, NO_SPAN_ODDS)
      impossible = null_odds >= self.null_threshold
      found &= ~impossible
      result.update(is_impossible=impossible, null_odds=null_odds)
    at = lambda values, positions: tf.gather(
        pick(values), positions, batch_dims=1
    )
    start_word = tf.where(found, at(position_word, pick(start)), -1)
    end_word = tf.where(found, at(position_word, pick(end)), -1)
    _, word_begin, _ = words
    # The span's characters: its first token's start in its word to its
    # last token's end in its word (SentencePieceTokenizer.piece_char_spans).
    start_char = tf.where(
        found,
        self._char_offset(context, word_begin, start_word, found)
        + at(position_chars[0], pick(start)),
        -1,
    )
    end_char = tf.where(
        found,
        self._char_offset(context, word_begin, end_word, found)
        + at(position_chars[1], pick(end)),
        -1,
    )
    answer = tf.where(
        found,
        tf.strings.substr(
            context,
            tf.maximum(start_char, 0),
            tf.maximum(end_char - start_char, 0),
            unit="UTF8_CHAR",
        ),
        "",
    )
    result.update(
        answer=answer,
        start_word=start_word,
        end_word=end_word,
        start_char=start_char,
        end_char=end_char,
        score=tf.where(found, best_score, float("-inf")),
    )
    return result

  def signatures(self) -> Dict[str, tf.types.experimental.ConcreteFunction]:
    return {"serving_default": self.serve}
