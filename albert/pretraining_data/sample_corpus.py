"""`write_sample_corpus`: real English text from the installed standard library.

The documentation strings of the Python standard library on this machine
become a corpus in the BERT input format: one document per module (its
docstring and those of its functions) and per class (its docstring and those
of its methods), one sentence per line, a blank line between documents.
Sources are parsed with `ast`, never imported. Code examples, indented
blocks and lists are left out. The text is the same for a given Python
version, so demos and tests get real prose on any machine, offline.
"""

import ast
import inspect
import os
import re
import sysconfig
import textwrap
import tokenize
from typing import Iterator, List, Optional, Sequence, Tuple

from official.io import atomic_write

_SKIP_DIRS = frozenset(
    (
        "test",
        "tests",
        "idle_test",
        "__pycache__",
        "site-packages",
        "dist-packages",
        "lib2to3",
        "turtledemo",
        "ensurepip",
        "pydoc_data",
    )
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")
_LIST_ITEM = re.compile(
    r"^\s*([-*+]|\d+[.)]|[A-Za-z_][\w.]*\s*(\(.*\))?\s*:\s*$)"
)


def stdlib_dir() -> str:
  return sysconfig.get_paths()["stdlib"]


def _prose_paragraphs(text: str) -> Iterator[str]:
  """Paragraphs of running text: no code, no indented blocks, no lists."""
  for paragraph in re.split(r"\n\s*\n", inspect.cleandoc(text)):
    lines = textwrap.dedent(paragraph).split("\n")
    if any(
        l.startswith((" ", "\t", ">>>", "...", "$")) or _LIST_ITEM.match(l)
        for l in lines
    ):
      continue
    text = " ".join(l.strip() for l in lines)
    letters = sum(c.isalpha() or c == " " for c in text)
    if len(text.split()) >= 4 and letters >= 0.8 * len(text):
      yield text


def split_sentences(docstring: str) -> List[str]:
  """Sentences of a docstring's prose, with at least three words each."""
  sentences = []
  for paragraph in _prose_paragraphs(docstring):
    for sentence in _SENTENCE_END.split(paragraph):
      sentence = " ".join(sentence.split())
      if len(sentence.split()) >= 3:
        sentences.append(sentence)
  return sentences


def _documents_of_module(tree: ast.Module) -> Iterator[List[str]]:
  """The module's document, then one per class (nested classes included)."""
  module_doc = split_sentences(ast.get_docstring(tree) or "")
  functions = (ast.FunctionDef, ast.AsyncFunctionDef)
  for node in tree.body:
    if isinstance(node, functions):
      module_doc += split_sentences(ast.get_docstring(node) or "")
  if module_doc:
    yield module_doc
  for node in ast.walk(tree):
    if isinstance(node, ast.ClassDef):
      doc = split_sentences(ast.get_docstring(node) or "")
      for item in node.body:
        if isinstance(item, functions):
          doc += split_sentences(ast.get_docstring(item) or "")
      if doc:
        yield doc


def _source_files(root: str) -> Iterator[str]:
  for directory, subdirs, files in os.walk(root):
    subdirs[:] = sorted(d for d in subdirs if d not in _SKIP_DIRS)
    for name in sorted(files):
      if name.endswith(".py"):
        yield os.path.join(directory, name)


def _help_topics(tree: ast.Module) -> Iterator[List[str]]:
  """pydoc's help topics (`topics = {name: text}`), one document each."""
  for node in tree.body:
    if (
        isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Dict)
        and any(getattr(t, "id", None) == "topics" for t in node.targets)
    ):
      for key, value in zip(node.value.keys, node.value.values):
        if isinstance(key, ast.Constant) and isinstance(value, ast.Constant):
          doc = split_sentences(value.value)
          if doc:
            yield doc


def iter_documents(root: Optional[str] = None) -> Iterator[List[str]]:
  """Documents (lists of sentences) of every parseable module under root,
  then the help topics of pydoc_data (the language reference's prose)."""
  root = root or stdlib_dir()
  for path in _source_files(root):
    tree = _parse(path)
    if tree:
      yield from _documents_of_module(tree)
  tree = _parse(os.path.join(root, "pydoc_data", "topics.py"))
  if tree:
    yield from _help_topics(tree)


def package_documents(
    packages: Sequence[str], root: Optional[str] = None
) -> Iterator[Tuple[str, List[str]]]:
  """(package, document) of every docstring of the standard library's
  `packages` (directories under root), package by package."""
  root = root or stdlib_dir()
  for package in packages:
    for document in iter_documents(os.path.join(root, package)):
      yield package, document


def _parse(path: str) -> Optional[ast.Module]:
  try:
    with tokenize.open(path) as f:
      return ast.parse(f.read())
  except (SyntaxError, UnicodeDecodeError, ValueError, OSError):
    return None  # Missing, or test data with other syntax or encodings.


def write_sample_corpus(
    path: str, max_bytes: Optional[int] = None, root: Optional[str] = None
) -> int:
  """Writes the corpus (whole documents, up to max_bytes); returns its size.

  The file is written under a temporary name and renamed when complete.
  """
  size = 0
  with atomic_write.atomic_file(path, "w", encoding="utf-8", newline="\n") as f:
    for document in iter_documents(root):
      text = "\n".join(document) + "\n\n"
      encoded = len(text.encode("utf-8"))
      if max_bytes is not None and size + encoded > max_bytes:
        break
      f.write(text)
      size += encoded
  return size
