"""`SquadFeaturizer`: SQuAD examples -> fixed-length windows for the encoder.

As BERT's `run_squad.convert_examples_to_features` (Devlin et al., 2019) with
ALBERT's SentencePiece tokenizer and the XLNet/ALBERT v2 labels:

  * the question is tokenised and cut to `max_query_length` tokens;
  * every whitespace word of the context is tokenised on its own (SentencePiece
    pieces never cross whitespace, so this equals tokenising the whole text);
    the token -> word map and each token's characters in the context
    (`SentencePieceTokenizer.piece_char_spans`) are kept;
  * the context tokens are covered by windows of at most
    `seq_length - len(question) - 3` tokens, each starting `doc_stride`
    tokens after the previous one;
  * each window is packed as `[CLS] question [SEP] window [SEP]` and padded;
  * for training, the answer's tokens are those holding its first and last
    characters (the original's character alignment, `squad_utils.
    convert_examples_to_features`, not BERT's word-level
    `_improve_answer_span`); in a window that does not contain them, or for
    an unanswerable question, start = end = 0 ([CLS]) and `is_impossible` = 1.

`token_is_max_context` marks, for a token seen by several windows, the window
where it has the most context on both sides (BERT's `_check_is_max_context`);
only there may a predicted span start or end on it.
"""

import dataclasses
from typing import Dict, List, Sequence, Tuple

import numpy as np

from albert.finetuning.long_text import is_max_context

from albert.text.tokenizers import Tokenizer
from albert.finetuning.packing import pack_segments
from albert.finetuning.squad.data import SquadExample


@dataclasses.dataclass
class SquadFeature:
  """One window of one example. Arrays are int32 [seq_length].

  Attributes:
    unique_id: a running id over all windows.
    example_index: index of the example in the featurised list.
    doc_span_index: index of the window within its example.
    input_word_ids, input_mask, input_type_ids: the encoder inputs.
    paragraph_mask: 1 on the window's context tokens, 0 elsewhere.
    start_position, end_position: gold token positions (0 = [CLS]).
    is_impossible: 1 if the window does not contain an answer.
    token_to_word: window position -> word index in `example.doc_tokens`.
    token_is_max_context: window position -> is this its best window.
    token_to_chars: window position -> (start, end) of the token in
      `example.context_text`, Unicode characters, end exclusive
      (`SentencePieceTokenizer.piece_char_spans` within its word).
  """

  unique_id: int
  example_index: int
  doc_span_index: int
  input_word_ids: np.ndarray
  input_mask: np.ndarray
  input_type_ids: np.ndarray
  paragraph_mask: np.ndarray
  start_position: int
  end_position: int
  is_impossible: int
  token_to_word: Dict[int, int]
  token_is_max_context: Dict[int, bool]
  token_to_chars: Dict[int, Tuple[int, int]] = dataclasses.field(
      default_factory=dict
  )


def word_starts(char_to_word_offset: Sequence[int]) -> List[int]:
  """The first character of every word, from `SquadExample.
  char_to_word_offset` (a word's index first appears at its first
  character; whitespace repeats the index before it)."""
  starts = []
  for c, word in enumerate(char_to_word_offset):
    if word == len(starts):
      starts.append(c)
  return starts


def doc_spans(
    num_tokens: int, max_tokens: int, doc_stride: int
) -> List[Tuple[int, int]]:
  """(start, length) windows over `num_tokens` tokens, as BERT's loop."""
  spans, start = [], 0
  while start < num_tokens:
    length = min(num_tokens - start, max_tokens)
    spans.append((start, length))
    if start + length == num_tokens:
      break
    start += min(length, doc_stride)
  return spans or [(0, 0)]  # An empty context still gets one window.


class SquadFeaturizer:
  """Turns `SquadExample`s into `SquadFeature` windows.

  Args:
    tokenizer: ALBERT's SentencePiece tokenizer (normalises, then encodes).
    seq_length: packed length T.
    doc_stride: tokens between the starts of consecutive windows.
    max_query_length: question tokens kept.
  """

  def __init__(
      self,
      tokenizer: Tokenizer,
      *,
      seq_length: int,
      doc_stride: int,
      max_query_length: int,
  ):
    if max_query_length < 1 or seq_length < max_query_length + 4:
      raise ValueError(
          f"seq_length={seq_length} must be >= max_query_length="
          f"{max_query_length} + 4 and max_query_length >= 1"
      )
    if doc_stride < 1:
      raise ValueError(f"doc_stride={doc_stride} must be >= 1")
    self.tokenizer = tokenizer
    self.seq_length = seq_length
    self.doc_stride = doc_stride
    self.max_query_length = max_query_length

  def _context_tokens(self, example: SquadExample):
    """(token ids, token -> word, token -> (start, end) characters in the
    context) of the context."""
    ids, tok_to_word, tok_to_chars = [], [], []
    starts = word_starts(example.char_to_word_offset)
    for i, word in enumerate(example.doc_tokens):
      pieces = self.tokenizer.tokenize(word)
      ids.extend(pieces)
      tok_to_word.extend([i] * len(pieces))
      tok_to_chars.extend(
          (starts[i] + a, starts[i] + b)
          for a, b in self.tokenizer.piece_char_spans(word, pieces)
      )
    return ids, tok_to_word, tok_to_chars

  def _answer_tokens(self, example, tok_to_chars) -> Tuple[int, int]:
    """Gold (start, end) context token indices, or (-1, -1): the tokens
    that hold the answer's first and last characters, as the original's
    character alignment (`squad_utils.convert_examples_to_features`)."""
    if example.is_impossible or example.start_position < 0:
      return -1, -1
    first = example.answer_start
    last = first + len(example.orig_answer_text)  # exclusive
    inside = [
        i for i, (a, b) in enumerate(tok_to_chars) if a < last and b > first
    ]
    if not inside:  # the answer is whitespace only: read_squad_examples
      return -1, -1  # refuses that, so only a hand-made example gets here
    return inside[0], inside[-1]

  def featurize(
      self,
      examples: Sequence[SquadExample],
      first_unique_id: int = 1_000_000_000,
  ) -> List[SquadFeature]:
    """All windows of all examples, in order (labels set where known)."""
    features = []
    tok = self.tokenizer
    for example_index, example in enumerate(examples):
      query = tok.tokenize(example.question_text)[: self.max_query_length]
      doc_ids, tok_to_word, tok_to_chars = self._context_tokens(example)
      tok_start, tok_end = self._answer_tokens(example, tok_to_chars)
      spans = doc_spans(
          len(doc_ids), self.seq_length - len(query) - 3, self.doc_stride
      )
      offset = len(query) + 2  # [CLS] question [SEP]
      for span_index, (start, length) in enumerate(spans):
        packed = pack_segments(
            query,
            doc_ids[start : start + length],
            cls_id=tok.cls_id,
            sep_id=tok.sep_id,
            seq_length=self.seq_length,
        )
        paragraph = [0] * offset + [1] * length
        pad = self.seq_length - len(paragraph)
        token_to_word = {
            offset + i: tok_to_word[start + i] for i in range(length)
        }
        token_chars = {
            offset + i: tok_to_chars[start + i] for i in range(length)
        }
        max_context = {
            offset + i: is_max_context(spans, span_index, start + i)
            for i in range(length)
        }
        inside = (
            tok_start >= start
            and tok_end <= start + length - 1
            and tok_start >= 0
        )
        features.append(
            SquadFeature(
                unique_id=first_unique_id + len(features),
                example_index=example_index,
                doc_span_index=span_index,
                input_word_ids=packed["input_word_ids"],
                input_mask=packed["input_mask"],
                input_type_ids=packed["input_type_ids"],
                paragraph_mask=np.array(paragraph + [0] * pad, np.int32),
                start_position=tok_start - start + offset if inside else 0,
                end_position=tok_end - start + offset if inside else 0,
                is_impossible=0 if inside else 1,
                token_to_word=token_to_word,
                token_is_max_context=max_context,
                token_to_chars=token_chars,
            )
        )
    return features
