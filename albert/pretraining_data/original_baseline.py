"""`run_original_baseline`: the original tool's algorithm, for benchmarks only.

A plain single-process re-implementation of the original
`create_pretraining_data.py` as docs/reference.md section 4 describes it: the
whole corpus read into lists of piece strings, documents shuffled, pairs and
masks built token by token with Python's `random` (n-grams with numpy), every
instance held in memory and shuffled, then written as `tf.train.Example` protos
with TensorFlow's TFRecordWriter. It exists so that `tools/benchmark_data.py`
can measure the speed-up in the same run, on the same machine. It is not used to
make training data.
"""

import collections
import random
import time
from typing import Dict, List

import numpy as np
import sentencepiece as spm

from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.text.tokenization import is_word_start_piece
from albert.text.tokenization import preprocess_text


def _read_documents(lines: List[str], sp, lower: bool) -> List[List[List[str]]]:
  documents = [[]]
  for line in lines:
    text = preprocess_text(line, lower)
    if not text:
      documents.append([])
      continue
    pieces = []
    for piece in sp.encode_as_pieces(text):
      if len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit():
        sub = sp.encode_as_pieces(piece[:-1].replace("\u2581", ""))
        if piece[0] != "\u2581" and sub and sub[0][0] == "\u2581":
          sub = sub[1:] if len(sub[0]) == 1 else [sub[0][1:]] + sub[1:]
        pieces.extend(sub + [","])
      else:
        pieces.append(piece)
    if pieces:
      documents[-1].append(pieces)
  return [d for d in documents if d]


def _mask(tokens, config, vocab_words, rng):
  """Whole-word n-gram masking, one candidate at a time."""
  candidates = []
  for i, token in enumerate(tokens):
    if token in ("[CLS]", "[SEP]"):
      continue
    if candidates and not is_word_start_piece(token):
      candidates[-1].append(i)
    else:
      candidates.append([i])
  budget = min(
      config.max_predictions_per_seq,
      max(1, int(round(len(tokens) * config.masked_lm_prob))),
  )
  ngrams = np.arange(1, config.ngram + 1)
  pvals = 1.0 / ngrams
  pvals /= pvals.sum()
  ngram_sets = [
      [candidates[i : i + n] for n in ngrams] for i in range(len(candidates))
  ]
  rng.shuffle(ngram_sets)
  output, masked, covered = list(tokens), [], set()
  for choices in ngram_sets:
    if len(masked) >= budget:
      break
    n = np.random.choice(ngrams, p=pvals)
    indexes = sum(choices[n - 1], [])
    while len(masked) + len(indexes) > budget and n > 1:
      n -= 1
      indexes = sum(choices[n - 1], [])
    if len(masked) + len(indexes) > budget or covered & set(indexes):
      continue
    for index in indexes:
      covered.add(index)
      if rng.random() < 0.8:
        output[index] = "[MASK]"
      elif rng.random() >= 0.5:
        output[index] = vocab_words[rng.randint(0, len(vocab_words) - 1)]
      masked.append((index, tokens[index]))
  masked.sort()
  return output, masked


def _instances(documents, index, config, vocab_words, rng):
  """Pairs of one document (SOP), as the original builds them."""
  document, max_num = documents[index], config.max_num_tokens
  target = max_num
  if rng.random() < config.short_seq_prob:
    target = rng.randint(2, max_num)
  out, chunk, length, i = [], [], 0, 0
  while i < len(document):
    chunk.append(document[i])
    length += len(document[i])
    if i == len(document) - 1 or length >= target:
      a_end = rng.randint(1, len(chunk) - 1) if len(chunk) >= 2 else 1
      a = [t for s in chunk[:a_end] for t in s]
      b, label = [t for s in chunk[a_end:] for t in s], 0
      if len(chunk) == 1:  # B from a random other document, labelled 1.
        for _ in range(10):
          other_index = rng.randint(0, len(documents) - 1)
          if other_index != index:
            break
        other = documents[other_index]
        start = rng.randint(0, len(other) - 1)
        for segment in other[start:]:
          b.extend(segment)
          if len(b) >= target - len(a):
            break
        label = 1
      elif rng.random() < 0.5:
        a, b, label = b, a, 1
      while len(a) + len(b) > max_num:
        longer = a if len(a) > len(b) else b
        del longer[0 if rng.random() < 0.5 else -1]
      tokens = ["[CLS]"] + a + ["[SEP]"] + b + ["[SEP]"]
      segments = [0] * (len(a) + 2) + [1] * (len(b) + 1)
      out.append(
          (tokens, segments, label) + _mask(tokens, config, vocab_words, rng)
      )
      chunk, length = [], 0
    i += 1
  return out


def run_original_baseline(
    lines: List[str],
    spm_model_file: str,
    output_file: str,
    config: PretrainingDataConfig,
) -> Dict[str, float]:
  """Runs the baseline on `lines`; returns examples, tokens, sentence
  label-1 count and seconds."""
  import tensorflow as tf

  start = time.perf_counter()
  sp = spm.SentencePieceProcessor(model_file=spm_model_file)
  rng = random.Random(config.random_seed)
  np.random.seed(config.random_seed)
  documents = _read_documents(lines, sp, config.do_lower_case)
  rng.shuffle(documents)
  vocab_words = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
  instances = []
  for _ in range(config.dupe_factor):
    for index in range(len(documents)):
      instances.extend(_instances(documents, index, config, vocab_words, rng))
  rng.shuffle(instances)

  def ints(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

  pad_seq = config.max_seq_length
  pad_pred = config.max_predictions_per_seq
  with tf.io.TFRecordWriter(output_file) as writer:
    for tokens, segments, label, output, masked in instances:
      ids = [sp.piece_to_id(t) for t in output]
      boundary = [
          1 if t in ("[CLS]", "[SEP]") or is_word_start_piece(t) else 0
          for t in tokens
      ]
      extra, extra_pred = pad_seq - len(ids), pad_pred - len(masked)
      features = collections.OrderedDict(
          input_ids=ints(ids + [0] * extra),
          input_mask=ints([1] * len(ids) + [0] * extra),
          segment_ids=ints(segments + [0] * extra),
          token_boundary=ints(boundary + [0] * extra),
          masked_lm_positions=ints([p for p, _ in masked] + [0] * extra_pred),
          masked_lm_ids=ints(
              [sp.piece_to_id(t) for _, t in masked] + [0] * extra_pred
          ),
          masked_lm_weights=tf.train.Feature(
              float_list=tf.train.FloatList(
                  value=[1.0] * len(masked) + [0.0] * extra_pred
              )
          ),
          next_sentence_labels=ints([label]),
      )
      writer.write(
          tf.train.Example(
              features=tf.train.Features(feature=features)
          ).SerializeToString()
      )
  return {
      "examples": len(instances),
      "tokens": sum(len(inst[0]) for inst in instances),
      "sentence_label_1": sum(inst[2] for inst in instances),
      "seconds": time.perf_counter() - start,
  }
