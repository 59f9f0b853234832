"""`train_wordpiece`: a WordPiece `vocab.txt` for ALBERT from text files.

The words are the original's basic tokens (`albert.text.wordpiece.
basic_tokens`: each CJK character a word of its own, punctuation split off,
lower-cased and accents stripped with `lower`), counted over every line of
the input, so the vocabulary is learnt from exactly what
`create_pretraining_data --vocab_file` will tokenize. The pieces are learnt
by tensorflow-text's WordPiece learner (`wordpiece_tokenizer_learner_lib`,
the bottom-up algorithm of its `bert_vocab_from_dataset`), with ALBERT's
special tokens first: [PAD]=0, [UNK]=1, [CLS]=2, [SEP]=3, [MASK]=4 (the ids
the SentencePiece models give <pad>, <unk> and the control symbols).
"""

import collections
import time
from typing import Counter, List

from absl import logging
from tensorflow_text.tools.wordpiece_vocab import (
    wordpiece_tokenizer_learner_lib as learner,
)

from albert.pretraining_data import shards
from albert.text import wordpiece
from official.errors import InputError
from official.io import atomic_write

SPECIAL_TOKENS = (
    wordpiece.PAD,
    wordpiece.UNK,
    wordpiece.CLS,
    wordpiece.SEP,
    wordpiece.MASK,
)


def count_words(input_file: str, lower: bool) -> Counter:
  """Basic-token counts of every line of the input files.

  Raises:
    InputError: missing input, or a line that is not UTF-8 (file and line).
  """
  counts = collections.Counter()
  inputs = shards.expand_inputs(input_file)
  total = sum(size for _, size in inputs)
  done, start, last = 0, time.time(), 0.0
  for path, _ in inputs:
    for _, size, line in shards.utf8_lines(path):
      done += size
      counts.update(t for t, _, _ in wordpiece.basic_tokens(line, lower))
      now = time.time()
      if now - last > 10:
        rate = done / max(now - start, 1e-9)
        logging.info(
            "counted %.1f of %.1f MB (%.1f MB/s, ETA %.0f s), %d words",
            done / 1e6,
            total / 1e6,
            rate / 1e6,
            (total - done) / max(rate, 1e-9),
            len(counts),
        )
        last = now
  return counts


def learn_vocabulary(
    counts: Counter,
    vocab_size: int,
    *,
    min_count: int = 2,
    max_unique_chars: int = 20000,
    max_token_length: int = 50,
) -> List[str]:
  """The vocabulary, special tokens first, at most `vocab_size` entries.

  Raises:
    InputError: no words, or a size too small for the special tokens and
      the corpus's characters.
  """
  if not counts:
    raise InputError("the input has no words; give a non-empty text corpus")
  chars = {c for word in counts for c in word}
  # Every character is kept as a word start and a continuation (##c).
  floor = len(SPECIAL_TOKENS) + 2 * min(len(chars), max_unique_chars)
  if vocab_size < floor:
    raise InputError(
        f"vocab_size={vocab_size} is below the {floor} entries the special "
        f"tokens and the input's {len(chars)} characters (alone and as "
        "##continuations) take; give a larger --vocab_size"
    )
  vocab = learner.learn(
      dict(counts),
      vocab_size=vocab_size,
      reserved_tokens=list(SPECIAL_TOKENS),
      lower_thresh=min_count,
      max_unique_chars=max_unique_chars,
      max_token_length=max_token_length,
      include_joiner_token=True,
  )
  return list(dict.fromkeys(vocab))[:vocab_size]


def train_wordpiece(
    *,
    input_file: str,
    vocab_file: str,
    vocab_size: int,
    lower: bool = True,
    min_count: int = 2,
) -> List[str]:
  """Counts, learns and writes `vocab_file` (atomically); the vocabulary."""
  if vocab_size < 1:
    raise InputError(f"vocab_size={vocab_size} must be >= 1")
  counts = count_words(input_file, lower)
  logging.info("%d distinct words; learning %d pieces", len(counts), vocab_size)
  vocab = learn_vocabulary(counts, vocab_size, min_count=min_count)
  atomic_write.write_atomic(vocab_file, "\n".join(vocab) + "\n")
  logging.info("Wrote %s: %d entries", vocab_file, len(vocab))
  return vocab
