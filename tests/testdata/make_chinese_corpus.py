r"""Makes tests/testdata/chinese/ from the Chinese manual pages Debian ships.

The zh_CN manual pages of two packages on this kind of machine, man-db (the
manual tools) and passwd (shadow's account tools), turned into plain text
(roff requests and escapes removed), one sentence per line (split after 。！？；),
one manual page per document:
  corpus.txt           the pretraining corpus: every page, a blank line
                       between pages
  classification/      own-data text classification: which package a
                       sentence comes from (`man-db` or `passwd`):
                       train.tsv and dev.tsv (every fifth sentence), columns
                       text and label
  SOURCES.md           the pages, the packages, their versions and licenses
  vocab.txt            made afterwards by our own tool, for the tests that
                       need a WordPiece vocabulary of this text:
                       python tools/train_wordpiece.py \
                           --input=tests/testdata/chinese/corpus.txt \
                           --vocab_file=tests/testdata/chinese/vocab.txt \
                           --vocab_size=1500

Only sentences with a CJK character are kept; each package gives at most
MAX_BYTES / 2 of corpus.txt. Run it by hand (no special environment):

  python tests/testdata/make_chinese_corpus.py --out=tests/testdata/chinese
"""

import argparse
import csv
import glob
import gzip
import os
import re
import subprocess

MAN_DIR = "/usr/share/man/zh_CN"
MAX_BYTES = 60_000
_ESCAPES = [
    (re.compile(r"\\f(\[[^\]]*\]|\(..|.)"), ""),  # font changes
    (re.compile(r"\\\((aq|cq)"), "'"),
    (re.compile(r"\\\((dq|lq|rq)"), '"'),
    (re.compile(r"\\\((em|en)"), "—"),
    (re.compile(r"\\\(.."), ""),
    (re.compile(r"\\\[[^\]]*\]"), ""),
    (re.compile(r"\\[-]"), "-"),
    (re.compile(r"\\e"), "\\\\"),
    (re.compile(r"\\[&|^%:]"), ""),
    (re.compile(r"\\ "), " "),
    (re.compile(r'\\".*$'), ""),
]
_SENTENCE_END = re.compile(r"(?<=[。！？；])")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _text_lines(path):
  """The prose of one roff page: request lines give their arguments."""
  with gzip.open(path, "rt", encoding="utf-8") as f:
    for line in f:
      line = line.rstrip("\n")
      if line.startswith(('.\\"', "'\\\"")):
        continue
      if line.startswith((".", "'")):
        parts = line.split(None, 1)
        if parts[0] in (".TH", ".so", ".ds", ".de", ".nr", ".if", ".ie",
                        ".el", ".ft", ".in", ".ti", ".ne", ".na", ".ad",
                        ".nh", ".hy", ".pc", ".ta", ".ll", ".rs", ".re"):
          continue
        line = parts[1].replace('"', "") if len(parts) > 1 else ""
      for pattern, replacement in _ESCAPES:
        line = pattern.sub(replacement, line)
      line = " ".join(line.split())
      if line:
        yield line


def _sentences(path):
  text = " ".join(_text_lines(path))
  for sentence in _SENTENCE_END.split(text):
    sentence = sentence.strip()
    if _CJK.search(sentence):
      yield sentence


def _package(path):
  out = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
  return out.stdout.split(":")[0].strip()


def _version(package):
  out = subprocess.run(
      ["dpkg-query", "-W", "-f=${Version}", package],
      capture_output=True,
      text=True,
  )
  return out.stdout.strip()


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--out", required=True)
  args = parser.parse_args()
  os.makedirs(os.path.join(args.out, "classification"), exist_ok=True)
  pages = sorted(glob.glob(os.path.join(MAN_DIR, "man*", "*.gz")))
  documents, labelled, used = [], [], []
  sizes = {"man-db": 0, "passwd": 0}
  for path in pages:
    package = _package(path)
    sentences = list(_sentences(path))
    if not sentences or package not in sizes:
      continue
    document = "\n".join(sentences) + "\n"
    if sizes[package] + len(document.encode()) > MAX_BYTES // 2:
      continue
    sizes[package] += len(document.encode())
    documents.append(document)
    used.append((os.path.relpath(path, MAN_DIR), package))
    labelled.extend((s, package) for s in sentences)
  with open(os.path.join(args.out, "corpus.txt"), "w", encoding="utf-8") as f:
    f.write("\n".join(documents))
  for split, rows in (
      ("train", [r for i, r in enumerate(labelled) if i % 5]),
      ("dev", [r for i, r in enumerate(labelled) if not i % 5]),
  ):
    path = os.path.join(args.out, "classification", f"{split}.tsv")
    with open(path, "w", encoding="utf-8", newline="") as f:
      writer = csv.writer(f, delimiter="\t", lineterminator="\n")
      writer.writerow(["text", "label"])
      writer.writerows(rows)
  with open(os.path.join(args.out, "SOURCES.md"), "w", encoding="utf-8") as f:
    f.write(
        "# Sources\n\nPlain text made by tests/testdata/make_chinese_corpus.py"
        " from the zh_CN manual pages of these Debian packages (their\n"
        "licenses: /usr/share/doc/PACKAGE/copyright; man-db is GPL-2+, the\n"
        "passwd package's shadow pages are BSD-3-Clause), used as test data:"
        "\n\n"
    )
    for package in ("man-db", "passwd"):
      f.write(f"- {package} {_version(package)}: ")
      f.write(", ".join(p for p, k in used if k == package) + "\n")
  print(len(documents), "pages,", sizes, "bytes,", len(labelled), "sentences")


if __name__ == "__main__":
  main()
