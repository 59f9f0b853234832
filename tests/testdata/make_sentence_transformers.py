r"""Makes tests/testdata/sentence_transformers/ with sentence-transformers'
own code.

  model/        `SentenceTransformer.save` of a tiny random ALBERT
                (transformers' AlbertModel: 2 layers, H=16) with mean
                pooling and `Normalize`, max_seq_length 24, and the
                SentencePiece model of original_hub as its tokenizer
                (`spiece.model` beside `tokenizer.json`, as the released
                ALBERT sentence models ship it)
  outputs.npz   `encode` of TEXTS (batch size 4; the long ones cut at 24
                tokens): `embeddings` [N, 16]; the tokenizer's input ids of
                each text, padded with -1 (`ids`)

With --ours=DIR (what our `convert_checkpoint --to=sentence_transformers`
wrote of the imported model) it loads DIR with `SentenceTransformer(DIR)`
and records its `encode` of TEXTS in ours.npz (`embeddings`), which the
tests hold against outputs.npz. Made with, in this repository's
environment:

  python tools/convert_checkpoint.py --from=sentence_transformers \
      --checkpoint=tests/testdata/sentence_transformers/model \
      --output_dir=/tmp/st_ours/dir
  python tools/convert_checkpoint.py --to=sentence_transformers \
      --checkpoint=/tmp/st_ours/dir --output_dir=/tmp/st_ours/st
  (side environment) make_sentence_transformers.py --ours=/tmp/st_ours/st

Not part of the test run: run it by hand in a side environment (torch and
sentence-transformers stay out of the package's). sentence-transformers 5
with transformers 4, the stack the released ALBERT sentence models were
saved with; transformers 5's AlbertTokenizer, built from a bare
SentencePiece file, maps every piece of this model to <unk>:

  python3.11 -m venv /tmp/st4
  /tmp/st4/bin/pip install torch==2.13.0 'transformers>=4.50,<5' \
      'sentence-transformers>=5,<6' sentencepiece protobuf
  /tmp/st4/bin/python tests/testdata/make_sentence_transformers.py
"""

import argparse
import json
import os
import shutil
import tempfile

import numpy as np
import sentence_transformers
from sentence_transformers import SentenceTransformer
from sentence_transformers import models
import torch
import transformers

SEED = 20261127
HERE = os.path.dirname(os.path.abspath(__file__))
SPM = os.path.join(
    HERE, "original_hub", "hub_module", "assets", "30k-clean.model"
)
MAX_SEQ_LENGTH = 24
TEXTS = [
    "more out for",
    "The Quick brown fox, again.",
    "",
    "out " * 40,  # longer than MAX_SEQ_LENGTH: cut
    "für ünïcode ÄÖÜ text",
    "a",
    "for more and more of the out of it, for more " * 3,
]


def _model(out: str) -> SentenceTransformer:
  torch.manual_seed(SEED)
  config = transformers.AlbertConfig(
      vocab_size=40,
      embedding_size=8,
      hidden_size=16,
      num_hidden_layers=2,
      num_attention_heads=2,
      intermediate_size=32,
      max_position_embeddings=64,
      hidden_act="gelu_new",
      hidden_dropout_prob=0.0,
      attention_probs_dropout_prob=0.0,
  )
  albert = transformers.AlbertModel(config)
  with torch.no_grad():  # away from the initialiser's zeros and ones
    for parameter in albert.parameters():
      parameter.add_(0.2 * torch.randn_like(parameter))
  tokenizer = transformers.AlbertTokenizer(vocab_file=SPM, do_lower_case=True)
  base = tempfile.mkdtemp()
  albert.save_pretrained(base)
  tokenizer.save_pretrained(base)
  transformer = models.Transformer(base, max_seq_length=MAX_SEQ_LENGTH)
  pooling = models.Pooling(16, pooling_mode="mean")
  model = SentenceTransformer(
      modules=[transformer, pooling, models.Normalize()], device="cpu"
  )
  if os.path.exists(out):
    shutil.rmtree(out)
  model.save(out)
  shutil.rmtree(base)
  return model


def _encode(model: SentenceTransformer) -> np.ndarray:
  return model.encode(TEXTS, batch_size=4, convert_to_numpy=True)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument(
      "--out", default=os.path.join(HERE, "sentence_transformers")
  )
  parser.add_argument("--ours", default=None)
  args = parser.parse_args()
  if args.ours:
    ours = SentenceTransformer(args.ours, device="cpu")
    np.savez(os.path.join(args.out, "ours.npz"), embeddings=_encode(ours))
    return
  os.makedirs(args.out, exist_ok=True)
  made = _model(os.path.join(args.out, "model"))
  model = SentenceTransformer(os.path.join(args.out, "model"), device="cpu")
  vectors = _encode(model)
  np.testing.assert_allclose(vectors, _encode(made), atol=1e-6)
  features = model.tokenize(TEXTS)
  ids = np.where(
      features["attention_mask"].numpy() > 0, features["input_ids"].numpy(), -1
  )
  np.savez(os.path.join(args.out, "outputs.npz"), embeddings=vectors, ids=ids)
  with open(os.path.join(args.out, "versions.json"), "w") as f:
    json.dump(
        {
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
        },
        f,
    )


if __name__ == "__main__":
  main()
