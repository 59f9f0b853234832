"""`train_sentencepiece`: an ALBERT SentencePiece vocabulary from text files.

With the original README's `spm_train` settings, as the released
`30k-clean.model` (docs/reference.md section 4): unigram, <pad>=0, <unk>=1,
control symbols [CLS]=2, [SEP]=3, [MASK]=4, no <s> / </s>, the user-defined
symbols ( ) " - . – £ € (ids 5 to 12), character coverage 0.99995, a shuffled
sample of 10,000,000 sentences. Lines are normalised exactly as
`create_pretraining_data` normalises them before encoding. At most
`max_sentences` lines, a seeded uniform sample of the whole input (reservoir
sampling), reach the trainer, so memory does not grow with the corpus.
"""

import io
import os
import random
from typing import List, Sequence, Tuple

from absl import logging
import sentencepiece as spm

from albert.pretraining_data import shards
from official.errors import InputError
from albert.text.tokenization import CONTROL_PIECES
from albert.text.tokenization import preprocess_text
from official.io import atomic_write
from official.io import files

# The original README's `spm_train --user_defined_symbols`: pieces that are
# never split or merged (ids 5 to 12 after the control symbols).
ORIGINAL_USER_DEFINED_SYMBOLS = (
    "(",
    ")",
    '"',
    "-",
    ".",
    "\u2013",
    "\u00a3",
    "\u20ac",
)
# The original README's `--input_sentence_size`.
ORIGINAL_MAX_SENTENCES = 10_000_000


def sample_sentences(
    input_file: str, max_sentences: int, seed: int, lower: bool
) -> List[str]:
  """A uniform random sample of the normalised non-empty lines, shuffled.

  Raises:
    InputError: missing input, or a line that is not UTF-8 (file and line).
  """
  if max_sentences < 1:
    raise InputError(f"max_sentences={max_sentences} must be >= 1")
  rng = random.Random(seed)
  sample, seen = [], 0
  for path, _ in shards.expand_inputs(input_file):
    for _, _, line in shards.utf8_lines(path):
      text = preprocess_text(line, lower)
      if not text:
        continue
      if seen < max_sentences:
        sample.append(text)
      else:
        slot = rng.randrange(seen + 1)
        if slot < max_sentences:
          sample[slot] = text
      seen += 1
  rng.shuffle(sample)
  logging.info("Sampled %d of %d sentences", len(sample), seen)
  return sample


# Piece models whose pieces mark word starts with "\u2581", as the masking and
# the serving preprocessor expect.
MODEL_TYPES = ("unigram", "bpe")


def train_sentencepiece(
    *,
    input_file: str,
    model_prefix: str,
    vocab_size: int = 30000,
    max_sentences: int = ORIGINAL_MAX_SENTENCES,
    do_lower_case: bool = True,
    character_coverage: float = 0.99995,
    user_defined_symbols: Sequence[str] = ORIGINAL_USER_DEFINED_SYMBOLS,
    hard_vocab_limit: bool = True,
    seed: int = 12345,
    num_threads: int = 0,
    model_type: str = "unigram",
) -> Tuple[str, str]:
  """Trains and writes PREFIX.model and PREFIX.vocab; returns their paths.

  Args:
    input_file: comma-separated files or globs.
    model_prefix: output path without extension; its directory must exist.
    vocab_size: number of pieces (a hard limit unless hard_vocab_limit=False).
    max_sentences: size of the sample given to the trainer (held in memory,
      about 100 bytes per sentence).
    do_lower_case: lower-case the text, as create_pretraining_data does.
    character_coverage: share of characters the vocabulary must cover.
    user_defined_symbols: extra pieces never split (a list, not a string);
      () for none.
    hard_vocab_limit: fail if the corpus cannot support vocab_size.
    seed: seed of the sample.
    num_threads: trainer threads (0: all cores).
    model_type: "unigram" (the original's) or "bpe".

  Raises:
    InputError: bad input or options; no file is written.
  """
  directory = os.path.dirname(os.path.abspath(model_prefix))
  if not os.path.isdir(directory):
    raise InputError(f"output directory {directory} does not exist")
  files.check_writable_dir(directory, "--model_prefix directory")
  if vocab_size < len(CONTROL_PIECES) + 3:
    raise InputError(f"vocab_size={vocab_size} is too small")
  if not 0 < character_coverage <= 1:
    raise InputError(
        f"character_coverage={character_coverage} must be in (0, 1]"
    )
  if model_type not in MODEL_TYPES:
    raise InputError(
        f"model_type={model_type!r} must be one of {', '.join(MODEL_TYPES)}"
    )
  sentences = sample_sentences(input_file, max_sentences, seed, do_lower_case)
  if not sentences:
    raise InputError(f"input {input_file} has no text")
  model = io.BytesIO()
  try:
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences),
        model_writer=model,
        model_type=model_type,
        vocab_size=vocab_size,
        pad_id=0,
        unk_id=1,
        bos_id=-1,
        eos_id=-1,
        control_symbols=list(CONTROL_PIECES),
        user_defined_symbols=list(user_defined_symbols),
        character_coverage=character_coverage,
        input_sentence_size=0,
        shuffle_input_sentence=False,
        hard_vocab_limit=hard_vocab_limit,
        num_threads=num_threads or (os.cpu_count() or 1),
        minloglevel=1,
    )
  except RuntimeError as e:
    reason = str(e).strip().splitlines()[-1] if str(e).strip() else repr(e)
    raise InputError(f"SentencePiece training failed: {reason}") from None
  processor = spm.SentencePieceProcessor(model_proto=model.getvalue())
  vocab = "".join(
      f"{processor.id_to_piece(i)}\t{processor.get_score(i):g}\n"
      for i in range(processor.get_piece_size())
  )
  model_path, vocab_path = model_prefix + ".model", model_prefix + ".vocab"
  atomic_write.write_atomic_files(
      {model_path: model.getvalue(), vocab_path: vocab.encode("utf-8")}
  )
  logging.info(
      "Wrote %s (%d pieces) and %s",
      model_path,
      processor.get_piece_size(),
      vocab_path,
  )
  return model_path, vocab_path
