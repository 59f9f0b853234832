"""`SquadServingModule`: raw question and context in, answer text out.

Everything runs in the TensorFlow graph (only TF and TF-Text ops), as
`SquadTask` prepares data in Python:

  1. the context is split into words on BERT's SQuAD whitespace
     (space, tab, CR, LF, U+202F);
  2. each word is normalised and SentencePiece-encoded on its own (pieces
     never cross whitespace), which gives the token -> word map;
  3. `[CLS] question [SEP] context [SEP]`, the question cut to
     `max_query_length` tokens and the context to what fits in
     `seq_length` (the first window of `squad_features`);
  4. the best span of at most `max_answer_length` context tokens, end >=
     start: v1.1 by start + end logit over all pairs, v2.0 over the 5x5 beam
     by start + end log-probability;
  5. the answer is the ORIGINAL context words of the span joined with one
     space.
"""

from typing import Dict

import tensorflow as tf

from albert.preprocessor import AlbertPreprocessor

_TEXT = tf.TensorSpec([None], tf.string)
_WHITESPACE = "[ \t\r\n\u202f]+"


class SquadServingModule(tf.Module):
  """Signature `serving_default(question [B], context [B])` returns:

    answer: string [B], the context words of the best span ("" if none);
    start_word, end_word: int32 [B], the span's first and last word (0-based
      index in the whitespace-split context; -1 if none);
    score: float32 [B], the span's start + end logit (v1.1) or log-prob
      (v2.0);
    v2.0 only: is_impossible: bool [B], answerability logit > null_threshold
      (then `answer` is ""), and null_odds: float32 [B], that logit.
  """

  def __init__(self, model, preprocessor: AlbertPreprocessor, *,
               max_query_length: int, max_answer_length: int,
               null_threshold: float = 0.0, name: str = "squad_serving"):
    super().__init__(name=name)
    self.model = model
    self.preprocessor = preprocessor
    self.max_query_length = max_query_length
    self.max_answer_length = max_answer_length
    self.null_threshold = float(null_threshold)
    self.version = model.version

  def _inputs(self, question, context):
    """Packed inputs [B, T], words [B, (W)], context token words [B, T]."""
    p = self.preprocessor
    text = tf.strings.regex_replace(context, _WHITESPACE, " ")
    text = tf.strings.regex_replace(text, "^ | $", "")
    words = tf.strings.split(text, sep=" ")  # [B, (W)]
    pieces = p.tokenize(words.flat_values)  # [N_words, (P)]
    doc = words.with_flat_values(pieces).merge_dims(1, 2)  # [B, (tokens)]
    word_index = tf.ragged.range(words.row_lengths()).flat_values
    token_word = doc.with_flat_values(
        tf.repeat(word_index, pieces.row_lengths()))  # [B, (tokens)]
    query = p.tokenize(question)[:, :self.max_query_length]
    budget = p.seq_length - 3 - query.row_lengths()  # [B]
    keep = tf.ragged.range(doc.row_lengths()) < budget[:, tf.newaxis]
    doc = tf.ragged.boolean_mask(doc, keep)
    token_word = tf.ragged.boolean_mask(token_word, keep)
    inputs = p.pack_trimmed([query, doc])
    # Context position t holds word token_word[t - offset].
    offset = query.row_lengths() + 2  # [B]
    positions = tf.range(p.seq_length, dtype=tf.int64)[tf.newaxis]  # [1, T]
    in_doc = ((positions >= offset[:, tf.newaxis]) &
              (positions < (offset + doc.row_lengths())[:, tf.newaxis]))
    padded_words = token_word.to_tensor(default_value=-1,
                                        shape=[None, p.seq_length])
    index = tf.clip_by_value(positions - offset[:, tf.newaxis], 0,
                             p.seq_length - 1)
    position_word = tf.where(in_doc, tf.gather(padded_words, index,
                                               batch_dims=1), -1)  # [B, T]
    inputs["paragraph_mask"] = tf.cast(in_doc, tf.int32)
    return inputs, words, tf.cast(position_word, tf.int32)

  def _best_pair(self, starts, ends, start_scores, end_scores, is_context):
    """Best valid (start, end, score) among [B, N] candidate pairs."""
    valid = (tf.gather(is_context, starts, batch_dims=1) &
             tf.gather(is_context, ends, batch_dims=1) &
             (ends >= starts) & (ends - starts < self.max_answer_length))
    scores = tf.where(valid, start_scores + end_scores, float("-inf"))
    best = tf.argmax(scores, axis=-1, output_type=tf.int32)  # [B]
    found = tf.reduce_any(valid, axis=-1)
    pick = lambda x: tf.gather(x, best, batch_dims=1)
    return pick(starts), pick(ends), pick(scores), found

  @tf.function(input_signature=[_TEXT, _TEXT])
  def serve(self, question, context):
    inputs, words, position_word = self._inputs(question, context)
    outputs = self.model(inputs, training=False)
    is_context = position_word >= 0  # [B, T]
    t = tf.shape(position_word)[1]
    if self.version == "1.1":
      grid = tf.range(t * t)  # every (start, end) pair
      starts = tf.broadcast_to(grid // t, [tf.shape(is_context)[0], t * t])
      ends = tf.broadcast_to(grid % t, tf.shape(starts))
      start_scores = tf.gather(outputs["start_logits"], starts, batch_dims=1)
      end_scores = tf.gather(outputs["end_logits"], ends, batch_dims=1)
    else:
      k1, k2 = self.model.start_n_top, self.model.end_n_top
      starts = tf.repeat(outputs["start_top_index"], k2, axis=1)  # [B, K1*K2]
      start_scores = tf.repeat(outputs["start_top_log_probs"], k2, axis=1)
      ends = tf.reshape(outputs["end_top_index"], [-1, k1 * k2])
      end_scores = tf.reshape(outputs["end_top_log_probs"], [-1, k1 * k2])
    start, end, score, found = self._best_pair(
        starts, ends, start_scores, end_scores, is_context)
    result = {}
    if self.version == "2.0":
      null_odds = outputs["cls_logits"]  # [B]
      impossible = null_odds > self.null_threshold
      found &= ~impossible
      result.update(is_impossible=impossible, null_odds=null_odds)
    start_word = tf.where(
        found, tf.gather(position_word, start, batch_dims=1), -1)
    end_word = tf.where(found, tf.gather(position_word, end, batch_dims=1), -1)
    word_pos = tf.ragged.range(tf.cast(words.row_lengths(), tf.int32))
    in_span = ((word_pos >= start_word[:, tf.newaxis]) &
               (word_pos <= end_word[:, tf.newaxis]))
    answer = tf.strings.reduce_join(tf.ragged.boolean_mask(words, in_span),
                                    axis=1, separator=" ")
    result.update(answer=answer, start_word=start_word, end_word=end_word,
                  score=tf.where(found, score, float("-inf")))
    return result

  def signatures(self) -> Dict[str, tf.types.experimental.ConcreteFunction]:
    return {"serving_default": self.serve}
