"""`tokenizer.json` of a SentencePiece model: the Hugging Face fast
tokenizer that splits text as our `SentencePieceTokenizer` does.

Without it, transformers 5 builds an ALBERT tokenizer from `spiece.model`
alone with other pre-tokenization: it splits off the model's user-defined
pieces (the original's `(`, `)`, `"`, `-`, `.`, ...) and then prefixes the
piece after each with the space mark, so `the "&" operator` gives
`▁the " ▁& " ▁operator` where SentencePiece gives `▁the ▁ " & " ▁operator`.
With this file both transformers 4 and 5 use the pipeline written here:

  normalizer      our `preprocess_text` (whitespace runs to one space, ends
                  stripped; NFKD without combining marks; lower-casing),
                  then the model's own normalisation (its precompiled
                  character map, extra spaces, the space mark and the dummy
                  prefix), in SentencePiece's order
  pre-tokenizer   the space mark before the text, then each user-defined
                  piece isolated (SentencePiece emits them whole)
  model           Unigram over the model's pieces and scores; a piece such
                  as "2," costs 100 more, so that the digit and the comma
                  come apart as the original's `encode_pieces` splits them
  post-processor  [CLS] A [SEP] (B [SEP], type ids 1)

Two differences are left. The "2," rule: the original re-encodes such a
piece without the comma, which a Unigram model cannot (4 of the 2,000 texts
of `albert.benchmarks.embedding.sample_texts(2000, 1)` get another piece
there with an 8,000-piece model of the sample corpus, against 1,116 with
transformers 5's own pipeline). And ties: pieces of equal total score
("xxx" as x + xx or xx + x) may come in the other order.
"""

import base64
import re
from typing import Any, Dict, List

from sentencepiece import sentencepiece_model_pb2

FILE_NAME = "tokenizer.json"
# tokenizer_config.json's names of the special pieces (ALBERT's).
SPECIAL_TOKENS = {
    "unk_token": "<unk>",
    "pad_token": "<pad>",
    "cls_token": "[CLS]",
    "sep_token": "[SEP]",
    "mask_token": "[MASK]",
}
SPACE_MARK = "\u2581"
_USER_DEFINED = 4  # ModelProto.SentencePiece.Type
_CONTROL = 3
_UNKNOWN = 2


def _replace(pattern: str, content: str, regex: bool = False) -> Dict:
  return {
      "type": "Replace",
      "pattern": {"Regex" if regex else "String": pattern},
      "content": content,
  }


def _digit_comma(piece: str) -> bool:
  return len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit()


def tokenizer_json(spm_model_file: str, do_lower_case: bool) -> Dict[str, Any]:
  """The tokenizer.json document (a dict) of `spm_model_file`."""
  proto = sentencepiece_model_pb2.ModelProto()
  with open(spm_model_file, "rb") as f:
    proto.ParseFromString(f.read())
  spec = proto.normalizer_spec
  normalizers: List[Dict] = [
      _replace(r"\s+", " ", regex=True),
      _replace(r"\A | \z", "", regex=True),
      {"type": "NFKD"},
      {"type": "StripAccents"},
  ]
  if do_lower_case:
    normalizers.append({"type": "Lowercase"})
  if spec.precompiled_charsmap:
    normalizers.append(
        {
            "type": "Precompiled",
            "precompiled_charsmap": base64.b64encode(
                spec.precompiled_charsmap
            ).decode("ascii"),
        }
    )
  if spec.remove_extra_whitespaces:
    normalizers += [
        _replace(r"\A +| +\z", "", regex=True),
        _replace(" {2,}", " ", regex=True),
    ]
  if spec.escape_whitespaces:
    normalizers.append(_replace(" ", SPACE_MARK))
  pre_tokenizers = []
  if spec.add_dummy_prefix:
    # The Metaspace step skips its prefix when the text starts with the
    # mark already; SentencePiece does not.
    normalizers.append(_replace(f"\\A{SPACE_MARK}", SPACE_MARK * 2, True))
    pre_tokenizers.append(
        {
            "type": "Metaspace",
            "replacement": SPACE_MARK,
            "prepend_scheme": "always",
            "split": False,
        }
    )
  user_defined = sorted(
      (p.piece for p in proto.pieces if p.type == _USER_DEFINED),
      key=len,
      reverse=True,
  )
  if user_defined:
    pre_tokenizers.append(
        {
            "type": "Split",
            "pattern": {"Regex": "|".join(map(re.escape, user_defined))},
            "behavior": "Isolated",
            "invert": False,
        }
    )
  ids = {p.piece: i for i, p in enumerate(proto.pieces)}
  special = [
      (i, p.piece)
      for i, p in enumerate(proto.pieces)
      if p.type in (_CONTROL, _UNKNOWN)
  ]
  cls, sep = "[CLS]", "[SEP]"

  def template(*parts):
    return [
        {"SpecialToken": {"id": name, "type_id": t}}
        if name in (cls, sep)
        else {"Sequence": {"id": name, "type_id": t}}
        for name, t in parts
    ]

  return {
      "version": "1.0",
      "truncation": None,
      "padding": None,
      "added_tokens": [
          {
              "id": i,
              "content": piece,
              "single_word": False,
              "lstrip": False,
              "rstrip": False,
              "normalized": False,
              "special": True,
          }
          for i, piece in special
      ],
      "normalizer": {"type": "Sequence", "normalizers": normalizers},
      "pre_tokenizer": {"type": "Sequence", "pretokenizers": pre_tokenizers},
      "post_processor": {
          "type": "TemplateProcessing",
          "single": template((cls, 0), ("A", 0), (sep, 0)),
          "pair": template((cls, 0), ("A", 0), (sep, 0), ("B", 1), (sep, 1)),
          "special_tokens": {
              name: {"id": name, "ids": [ids[name]], "tokens": [name]}
              for name in (cls, sep)
          },
      },
      "decoder": {
          "type": "Sequence",
          "decoders": [
              _replace(SPACE_MARK, " "),
              {"type": "Fuse"},
              {"type": "Strip", "content": " ", "start": 1, "stop": 0},
          ],
      },
      "model": {
          "type": "Unigram",
          "unk_id": proto.trainer_spec.unk_id,
          "vocab": [
              [p.piece, p.score - 100.0 if _digit_comma(p.piece) else p.score]
              for p in proto.pieces
          ],
          "byte_fallback": False,
      },
  }
