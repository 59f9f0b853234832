r"""Makes tests/testdata/wordpiece/ with the original release's own tokenizer.

text.txt (committed, written by hand: Chinese, English, punctuation, accents,
Greek, Japanese, Korean, control characters, odd whitespace; the literal
`\x00` stands for a NUL) is read by the original's `tokenization.BasicTokenizer`
to build vocab.txt: the special tokens, then every basic token of the text,
words longer than 6 characters split into a 3-character head and `##`
pieces (so that the greedy match has work to do), and a few tokens left out
(so that [UNK] appears). reference.json holds, for do_lower_case true and
false, the pieces the original's `tokenization.FullTokenizer` (no
spm_model_file: BasicTokenizer, then WordpieceTokenizer) gives for every
line.

Not part of the test run: run it by hand in the side environment of
make_original_hub.py, with a checkout of the original:

  /tmp/tf1hub/bin/python tests/testdata/make_wordpiece_reference.py \
      --albert_repo=/tmp/albert_original --out=tests/testdata/wordpiece
"""

import argparse
import json
import os
import sys
import tempfile

LEFT_OUT = ("搜", "world", "½", "ﬁ")  # -> [UNK]


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--albert_repo", required=True)
  parser.add_argument("--out", required=True)
  args = parser.parse_args()
  root = tempfile.mkdtemp()
  os.symlink(os.path.abspath(args.albert_repo), os.path.join(root, "albert"))
  sys.path.insert(0, root)
  from albert import tokenization  # pylint: disable=import-outside-toplevel

  with open(os.path.join(args.out, "text.txt"), encoding="utf-8") as f:
    lines = f.read().replace("\\x00", "\x00").splitlines()
  tokens = set()
  for lower in (True, False):
    basic = tokenization.BasicTokenizer(do_lower_case=lower)
    for line in lines:
      tokens.update(basic.tokenize(line))
  vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]"]
  for token in sorted(tokens):
    if token in LEFT_OUT:
      continue
    if len(token) > 6:
      vocab += [token[:3], "##" + token[3:5], "##" + token[5:]]
    else:
      vocab.append(token)
  vocab = list(dict.fromkeys(vocab))
  vocab_file = os.path.join(args.out, "vocab.txt")
  with open(vocab_file, "w", encoding="utf-8") as f:
    f.write("\n".join(vocab) + "\n")
  reference = {}
  for lower in (True, False):
    full = tokenization.FullTokenizer(vocab_file, do_lower_case=lower)
    reference[str(lower).lower()] = [full.tokenize(line) for line in lines]
  with open(os.path.join(args.out, "reference.json"), "w",
            encoding="utf-8") as f:
    json.dump(reference, f, ensure_ascii=False, indent=1)
  print(len(vocab), "tokens;", len(lines), "lines")


if __name__ == "__main__":
  main()
