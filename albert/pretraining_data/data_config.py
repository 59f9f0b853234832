"""`PretrainingDataConfig`: every option that decides the generated examples.

Field names and defaults are the original `create_pretraining_data.py` flags
(docs/reference.md section 4), plus `sentence_task` and `block_bytes`. Options
that only change speed (number of worker processes) are not here, so the config
fingerprints an output: equal configs, inputs and model give equal bytes.
"""

import dataclasses
import math
from typing import Optional

from official.errors import InputError

SENTENCE_TASKS = ("sop", "nsp", "none")
SINGLE_SEGMENT_RULES = ("split", "random_document")
# "examples": masked pairs, dupe_factor copies (the original's records);
# "documents": each document once, paired and masked as it is read.
OUTPUT_FORMATS = ("examples", "documents")
# [CLS] A [SEP] B [SEP] with at least one token in each of A and B.
MIN_SEQ_LENGTH = 5


@dataclasses.dataclass(frozen=True)
class PretrainingDataConfig:
  """Options of example generation.

  Attributes:
    max_seq_length: tokens per example, padded with 0.
    max_predictions_per_seq: masked positions per example, at most.
    random_seed: seeds every random draw.
    dupe_factor: passes over the corpus, each with fresh pairs and masks.
    masked_lm_prob: fraction of tokens to mask (before the cap).
    short_seq_prob: probability that a sequence gets a shorter target length.
    ngram: longest masked n-gram, in whole words.
    favor_shorter_ngram: p(n) ~ 1/n if True, else the reverse order.
    do_lower_case: lower-case the text before SentencePiece.
    do_whole_word_mask: mask whole words (else single pieces).
    sentence_task: "sop" (in order / swapped), "nsp" (in order / random
      document) or "none" (always in order, label 0).
    block_bytes: size of the corpus blocks (the unit of parallel work).
    single_segment: what a chunk of one segment becomes in SOP data:
      "random_document" (the original's rule, with which the released
      models' data was made: B from a random document, label 1) or "split"
      (ours: cut at a word start into A and B, then in order or swapped).
      None: "random_document", except "split" for sentence_task "none".
    document_pool_size: documents sampled from the whole corpus, from every
      block, to draw random B from (NSP, random_document).
    output_format: "examples" (the original's masked pairs, dupe_factor
      passes) or "documents" (token ids once, dupe_factor 1; the trainer
      pairs and masks them as it reads: docs/pretraining_data.md). The
      pairing and masking options above are then recorded as the reader's
      defaults.
  """

  max_seq_length: int = 512
  max_predictions_per_seq: int = 20
  random_seed: int = 12345
  dupe_factor: int = 40
  masked_lm_prob: float = 0.15
  short_seq_prob: float = 0.1
  ngram: int = 3
  favor_shorter_ngram: bool = True
  do_lower_case: bool = True
  do_whole_word_mask: bool = True
  sentence_task: str = "sop"
  block_bytes: int = 2 << 20
  single_segment: Optional[str] = None
  document_pool_size: int = 10000
  output_format: str = "examples"

  def __post_init__(self):
    if self.max_seq_length < MIN_SEQ_LENGTH:
      raise InputError(
          f"max_seq_length={self.max_seq_length} is too small: it must be at "
          f"least {MIN_SEQ_LENGTH} ([CLS] A [SEP] B [SEP])"
      )
    if self.max_predictions_per_seq < 1:
      raise InputError(
          f"max_predictions_per_seq="
          f"{self.max_predictions_per_seq} must be at least 1"
      )
    for name in ("masked_lm_prob", "short_seq_prob"):
      value = getattr(self, name)
      if not (
          isinstance(value, (int, float))
          and math.isfinite(value)
          and 0.0 <= value <= 1.0
      ):
        raise InputError(f"{name}={value} must be a probability in [0, 1]")
    for name in ("dupe_factor", "ngram", "block_bytes", "document_pool_size"):
      if getattr(self, name) < 1:
        raise InputError(f"{name}={getattr(self, name)} must be at least 1")
    if self.random_seed < 0:
      raise InputError(f"random_seed={self.random_seed} must be >= 0")
    if self.sentence_task not in SENTENCE_TASKS:
      raise InputError(
          f"sentence_task={self.sentence_task!r} must be one of "
          f"{', '.join(SENTENCE_TASKS)}"
      )

    if self.output_format not in OUTPUT_FORMATS:
      raise InputError(
          f"output_format={self.output_format!r} must be one of "
          f"{', '.join(OUTPUT_FORMATS)}"
      )
    if self.output_format == "documents" and self.dupe_factor != 1:
      raise InputError(
          f"dupe_factor={self.dupe_factor} does not apply to "
          "output_format='documents': each document is written once and "
          "gets new pairs and masks every epoch; leave dupe_factor out"
      )
    if self.single_segment is None:
      rule = "split" if self.sentence_task == "none" else "random_document"
      object.__setattr__(self, "single_segment", rule)
    if self.single_segment not in SINGLE_SEGMENT_RULES:
      raise InputError(
          f"single_segment={self.single_segment!r} must be one of "
          f"{', '.join(SINGLE_SEGMENT_RULES)}"
      )
    if self.single_segment == "random_document" and (
        self.sentence_task == "none"
    ):
      raise InputError(
          "single_segment='random_document' labels its pairs 1, which "
          "sentence_task='none' has no use for; use it with 'sop' (or 'nsp', "
          "which always does so)"
      )

  @property
  def uses_random_documents(self) -> bool:
    """Whether pairs draw B from random documents (needs the pool)."""
    return self.sentence_task == "nsp" or (
        self.sentence_task == "sop" and self.single_segment == "random_document"
    )

  @property
  def max_num_tokens(self) -> int:
    """Tokens of A and B together: the sequence minus [CLS] and two [SEP]."""
    return self.max_seq_length - 3

  def to_dict(self):
    return dataclasses.asdict(self)
