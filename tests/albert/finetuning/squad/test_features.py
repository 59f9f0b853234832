"""SQuAD windows: packing, doc_stride, gold token spans, max-context flags."""

import dataclasses

import numpy as np
import pytest
import tensorflow as tf

from albert.finetuning import feature_cache
from albert.finetuning.squad import features as squad_features
from albert.finetuning.squad.data import SquadExample, split_words


def _example(context, question, answer=None, start_char=None, qas_id="q"):
  words, offsets = split_words(context)
  ex = SquadExample(
      qas_id=qas_id,
      question_text=question,
      context_text=context,
      doc_tokens=words,
      char_to_word_offset=offsets,
      answer_texts=[answer] if answer else [],
      is_impossible=answer is None,
  )
  if answer is not None:
    ex.orig_answer_text = answer
    ex.answer_start = start_char
    ex.start_position = offsets[start_char]
    ex.end_position = offsets[start_char + len(answer) - 1]
  return ex


def test_doc_spans_follow_berts_loop():
  # 10 tokens, windows of 4, stride 3: starts 0, 3, 6 (6 + 4 = 10 ends it).
  assert squad_features.doc_spans(10, 4, 3) == [(0, 4), (3, 4), (6, 4)]
  assert squad_features.doc_spans(3, 4, 3) == [(0, 3)]
  # Stride larger than a window: min(length, stride) is the step.
  assert squad_features.doc_spans(5, 2, 9) == [(0, 2), (2, 2), (4, 1)]


def test_is_max_context_by_hand():
  spans = [(0, 4), (3, 4), (6, 4)]
  # Token 3: in span 0 min(3, 0) = 0, in span 1 min(0, 3) = 0; ties keep the
  # first (strictly greater wins), so span 0.
  assert squad_features.is_max_context(spans, 0, 3)
  # Token 4: span 0 gives min(4-0, 3-4) -> not inside; span 1 min(1, 2) = 1.
  assert squad_features.is_max_context(spans, 1, 4)
  assert not squad_features.is_max_context(spans, 0, 4)


def test_word_starts_from_the_character_table():
  _, offsets = split_words("  ab c\tdef ")
  assert squad_features.word_starts(offsets) == [2, 5, 7]


def test_labels_are_the_tokens_of_the_answer_characters(tokenizer):
  # "Japan" inside "Japan's", a number inside "1,000-strong": the gold
  # tokens are those holding the answer's characters, not whole words.
  context = "It is Japan's capital, a 1,000-strong city."
  featurizer = squad_features.SquadFeaturizer(
      tokenizer, seq_length=48, doc_stride=16, max_query_length=8
  )
  for answer in ("Japan", "1,000", "Japan's capital"):
    ex = _example(context, "Which?", answer, context.index(answer))
    (f,) = featurizer.featurize([ex])
    start = f.token_to_chars[f.start_position][0]
    end = f.token_to_chars[f.end_position][1]
    assert context[start:end] == answer
    # Every context token's characters are its own piece of the context.
    pieces = [
        tokenizer.id_to_piece(int(f.input_word_ids[p])).lstrip("\u2581")
        for p in sorted(f.token_to_chars)
    ]
    texts = [
        context[a:b].lower()
        for a, b in (f.token_to_chars[p] for p in sorted(f.token_to_chars))
    ]
    assert [t for t, p in zip(texts, pieces) if p] == [p for p in pieces if p]


def test_packing_and_labels_in_a_single_window(tokenizer):
  context = "The function returns the value of the argument."
  ex = _example(
      context, "What is returned?", "the value", context.index("the value")
  )
  featurizer = squad_features.SquadFeaturizer(
      tokenizer, seq_length=48, doc_stride=16, max_query_length=8
  )
  (f,) = featurizer.featurize([ex])
  query = tokenizer.tokenize("What is returned?")
  doc = [t for w in ex.doc_tokens for t in tokenizer.tokenize(w)]
  assert doc == tokenizer.tokenize(context)  # Per word == whole text.
  expected = (
      [tokenizer.cls_id] + query + [tokenizer.sep_id] + doc + [tokenizer.sep_id]
  )
  n = len(expected)
  np.testing.assert_array_equal(f.input_word_ids[:n], expected)
  assert not f.input_word_ids[n:].any() and f.input_word_ids.dtype == np.int32
  np.testing.assert_array_equal(f.input_mask, [1] * n + [0] * (48 - n))
  np.testing.assert_array_equal(
      f.input_type_ids,
      [0] * (len(query) + 2) + [1] * (len(doc) + 1) + [0] * (48 - n),
  )
  np.testing.assert_array_equal(
      f.paragraph_mask, [0] * (len(query) + 2) + [1] * len(doc) + [0] * (49 - n)
  )
  span = f.input_word_ids[f.start_position : f.end_position + 1].tolist()
  assert span == tokenizer.tokenize("the value")
  assert f.is_impossible == 0
  words = {
      f.token_to_word[p] for p in range(f.start_position, f.end_position + 1)
  }
  assert words == {3, 4}
  assert all(f.token_is_max_context.values())


def test_windows_over_a_long_context(tokenizer):
  words = ["alpha", "beta", "gamma", "delta"] * 10 + ["answer", "here"]
  context = " ".join(words)
  ex = _example(context, "Where?", "answer", context.index("answer"))
  featurizer = squad_features.SquadFeaturizer(
      tokenizer, seq_length=24, doc_stride=5, max_query_length=4
  )
  features = featurizer.featurize([ex])
  query = tokenizer.tokenize("Where?")[:4]
  offset = len(query) + 2
  doc = [t for w in words for t in tokenizer.tokenize(w)]
  spans = squad_features.doc_spans(len(doc), 24 - len(query) - 3, 5)
  assert len(features) == len(spans) > 2
  answer_tok = sum(len(tokenizer.tokenize(w)) for w in words[:40])
  for k, (f, (start, length)) in enumerate(zip(features, spans)):
    assert f.doc_span_index == k and f.example_index == 0
    assert f.unique_id == features[0].unique_id + k
    np.testing.assert_array_equal(
        f.input_word_ids[offset : offset + length], doc[start : start + length]
    )
    if start <= answer_tok < start + length:
      assert f.is_impossible == 0
      assert f.start_position == answer_tok - start + offset
      assert f.input_word_ids[f.start_position] in tokenizer.tokenize("answer")
    else:  # BERT/ALBERT: outside the window the label is [CLS].
      assert (f.start_position, f.end_position, f.is_impossible) == (0, 0, 1)
  # Each context token is the max-context token of exactly one window.
  counts = np.zeros(len(doc), int)
  for f, (start, _) in zip(features, spans):
    for pos, best in f.token_is_max_context.items():
      counts[start + pos - offset] += best
  np.testing.assert_array_equal(counts, 1)


def test_question_truncated_and_impossible_labels(tokenizer):
  ex = _example("some context words", "a very long question " * 5)
  featurizer = squad_features.SquadFeaturizer(
      tokenizer, seq_length=32, doc_stride=8, max_query_length=3
  )
  (f,) = featurizer.featurize([ex])
  assert f.input_type_ids[:5].tolist() == [0] * 5 and f.input_type_ids[5] == 1
  assert f.input_word_ids[4] == tokenizer.sep_id
  assert (f.start_position, f.end_position, f.is_impossible) == (0, 0, 1)
  spec = {
      "input_word_ids": tf.TensorSpec([32], tf.int32),
      "is_impossible": tf.TensorSpec([], tf.int32),
  }
  arrays = feature_cache.stack_features(
      [dataclasses.asdict(f), dataclasses.asdict(f)], spec
  )
  assert arrays["input_word_ids"].shape == (2, 32)
  assert arrays["is_impossible"].tolist() == [1, 1]


def test_bad_lengths_rejected(tokenizer):
  with pytest.raises(ValueError, match="seq_length=10"):
    squad_features.SquadFeaturizer(
        tokenizer, seq_length=10, doc_stride=4, max_query_length=8
    )
