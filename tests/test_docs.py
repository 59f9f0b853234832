"""The docs stay true: every command that README.md and docs/*.md show
(`tools/X.py`, `python -m albert.X`, `albert-X`) names a program of the
package and passes only flags that program defines; every relative link
points at a file and, with `#anchor`, at a heading there.

Every runnable fenced block (one whose info string is sh, bash, shell,
console, python or py, and a bare block with a line that starts with a
command: python, .venv/bin/python, pip, make, git, gcloud, an albert-*
script, tools/X.py, or `$ `) has a marker on the line right before its
opening fence: `<!-- run by: TEST_FILE -->` when a test runs it (the file
exists and names the doc), else `<!-- needs: NEED[, NEED] -->` with NEEDS'
words for what a test cannot have. A new block without one fails.

docs/reference.md is left out: its commands are the original release's.
"""

import os
import re
import shlex

import pytest

from tests import helpers

DOCS = ["README.md"] + sorted(
    os.path.join("docs", name)
    for name in os.listdir(os.path.join(helpers.REPO, "docs"))
    if name.endswith(".md") and name != "reference.md"
)
_SCRIPTS = re.compile(
    r'^(albert-[a-z-]+) = "albert\.cli\.([a-z_]+):run"$', re.M
)

# What a block needs that a test cannot have: the words of `<!-- needs: -->`.
NEEDS = {
    "a fresh machine": "creates .venv or installs packages (make demo, make "
    "test, pip install): a machine's first commands, not the suite's",
    "the network": "downloads: packages, clones, cloud storage",
    "a GPU": "an NVIDIA GPU and its driver",
    "a TPU": "a Cloud TPU",
    "Google Cloud": "a Google Cloud project: gs:// buckets, Dataflow",
    "a released checkpoint": "a pretrained model of the original release, "
    "Hugging Face, TF Hub, the Model Garden or keras-hub, downloaded",
    "GLUE data": "the GLUE data sets, downloaded",
    "your own data": "the reader's files the block names (a corpus, a data "
    "set, a preset)",
    "the demo's output": "demo_out/, which `make demo` writes",
    "another block's output": "files another block of the docs writes "
    "(a model directory, an export, data, a script)",
    "minutes of CPU": "a run of minutes to an hour: longer than a test may "
    "take",
    "hours of CPU": "a run of hours or more: training at a released model's "
    "size, an ablation",
    "an idle machine": "a timing: its numbers mean something only on a "
    "machine doing nothing else",
    "Keras 3": "a Keras 3 environment with keras-hub (the suite's is Keras 2, "
    "tf_keras)",
    "the repository's history": "past commits of this repository",
    "TF Serving": "a running TensorFlow Serving server (its docker image), "
    "which no test machine has",
}
# Info strings of runnable blocks, and those of them that are shell.
_RUNNABLE = {"sh", "bash", "shell", "console", "python", "py", ""}
_SHELL = {"sh", "bash", "shell", "console", ""}
_FENCE = re.compile(r"^( *)(`{3,}|~{3,})\s*([^\s`]*)")
# A line of a bare block that makes it a shell block.
_COMMAND = re.compile(
    r"^\s*(\$ |(\.venv/bin/)?python3?\s|pip\s|make\s|git\s|gcloud\s"
    r"|albert-[a-z-]+\s|(\./)?tools/[a-z_]+\.py)"
)
_MARKER = re.compile(r"^\s*<!-- (needs|run by): (.+?) -->\s*$")


def _text(doc):
  with open(os.path.join(helpers.REPO, doc), encoding="utf-8") as f:
    return f.read()


def _blocks(text):
  """(line number of the opening fence, info string, lines dedented by the
  fence's indentation, the line before the fence) of each fenced block."""
  blocks = []
  lines = text.split("\n")
  number = 0
  while number < len(lines):
    fence = _FENCE.match(lines[number])
    number += 1
    if not fence:
      continue
    indent, mark, info = fence.groups()
    start, body = number, []
    while number < len(lines) and not re.fullmatch(
        rf" *{mark[0]}{{{len(mark)},}}\s*", lines[number]
    ):
      line = lines[number]
      body.append(line[len(indent) :] if line.startswith(indent) else line)
      number += 1
    number += 1
    before = lines[start - 2] if start >= 2 else ""
    blocks.append((start, info.lower(), body, before))
  return blocks


def _runnable(info, body):
  """Whether a block is runnable; a bare one is when it holds a command."""
  if info not in _RUNNABLE:
    return False
  return bool(info) or any(_COMMAND.match(line) for line in body)


def _shell_commands(doc):
  """(line number, argv) of each command in the doc's shell blocks."""
  commands = []
  for start, info, body, _ in _blocks(_text(doc)):
    if info not in _SHELL or not _runnable(info, body):
      continue
    if info == "console":  # `$ ` lines and their continuations: the rest
      kept, going = [], False  # is output
      for line in body:
        command = line.startswith("$ ")
        kept.append(line[2:] if command else line if going else "")
        going = (command or going) and line.rstrip().endswith("\\")
      body = kept
    commands += _joined(body, start + 1)
  return commands


def _marker_errors(doc, text):
  """One line per runnable block of `text` (the doc's) whose marker is
  missing or wrong."""
  errors = []
  for start, info, body, before in _blocks(text):
    if not _runnable(info, body):
      continue
    where = f"{doc}:{start}"
    marker = _MARKER.match(before)
    if not marker:
      errors.append(
          f"{where}: a ```{info} block without a marker on the line before:"
          " <!-- run by: TEST_FILE --> or <!-- needs: ... --> (tests/"
          "test_docs.py NEEDS)"
      )
    elif marker.group(1) == "needs":
      errors += [
          f"{where}: unknown need {need!r}: one of tests/test_docs.py NEEDS"
          for need in marker.group(2).split(", ")
          if need not in NEEDS
      ]
    else:
      test = os.path.join(helpers.REPO, marker.group(2))
      if not os.path.isfile(test):
        errors.append(f"{where}: run by {marker.group(2)}: no such file")
      elif doc not in _text(test):
        errors.append(f"{where}: run by {marker.group(2)}: it never names it")
  return errors


def _joined(block, start):
  """Commands as shlex argv, one per line or per backslash-continued (or
  open-quoted) run of lines, each with its first line number."""
  pending, first = "", start
  for offset, line in enumerate(block):
    if not pending:
      first = start + offset
    if line.rstrip().endswith("\\"):
      pending += line.rstrip()[:-1] + " "
      continue
    text = pending + line
    try:
      argv = shlex.split(text, comments=True)
    except ValueError:  # a quote open across lines (python -c "...")
      pending = text + "\n"
      continue
    pending = ""
    if argv:
      yield first, argv


def _program(argv):
  """The module a command runs (albert.cli.NAME, or albert.experiments.NAME
  for an experiment's driver), or None."""
  scripts = dict(_SCRIPTS.findall(_text("pyproject.toml")))
  for i, token in enumerate(argv):
    match = re.fullmatch(r"(?:\./)?tools/([a-z_]+)\.py", token)
    if match:
      return f"albert.cli.{match.group(1)}"
    if token == "-m" and i + 1 < len(argv):
      module = argv[i + 1]
      if module.startswith("albert.experiments."):
        return module
      if module.startswith("albert."):
        return f"albert.cli.{module.rsplit('.', 1)[-1]}"
    if token in scripts and i == 0:
      return f"albert.cli.{scripts[token]}"
  return None


def _unknown_flags(argv, program):
  package, _, name = program.rpartition(".")
  names, booleans, _ = helpers.program_flags(name, package)
  unknown = []
  for token in argv:
    if not token.startswith("--"):
      continue
    name = token[2:].split("=", 1)[0]
    if name in names or (name.startswith("no") and name[2:] in booleans):
      continue
    unknown.append(token)
  return unknown


@pytest.mark.parametrize("doc", DOCS)
def test_commands_pass_only_flags_their_program_defines(doc):
  wrong = []
  for line, argv in _shell_commands(doc):
    program = _program(argv)
    if program is None:
      continue
    path = os.path.join(helpers.REPO, *program.split(".")) + ".py"
    if not os.path.isfile(path):
      wrong.append(f"{doc}:{line}: no program {program}")
      continue
    wrong += [
        f"{doc}:{line}: {program} has no flag {flag}"
        for flag in _unknown_flags(argv, program)
    ]
  assert not wrong, "\n".join(wrong)


def _anchor(heading):
  """GitHub's anchor of a heading."""
  text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
  return text.replace(" ", "-")


@pytest.mark.parametrize("doc", DOCS)
def test_relative_links_point_at_files_and_headings(doc):
  wrong = []
  text = re.sub(r"```.*?```", "", _text(doc), flags=re.S)
  for target in re.findall(r"\]\(([^)\s]+)\)", text):
    if re.match(r"[a-z]+:", target):
      continue  # a URL
    path, _, anchor = target.partition("#")
    where = os.path.normpath(
        os.path.join(helpers.REPO, os.path.dirname(doc), path)
        if path
        else os.path.join(helpers.REPO, doc)
    )
    if not os.path.exists(where):
      wrong.append(f"{doc}: {target}: no such file")
      continue
    if anchor and where.endswith(".md"):
      with open(where, encoding="utf-8") as f:
        prose = re.sub(r"```.*?```", "", f.read(), flags=re.S)
      headings = {
          _anchor(line.lstrip("#"))
          for line in prose.split("\n")
          if line.startswith("#")
      }
      if anchor not in headings:
        wrong.append(f"{doc}: {target}: no such heading")
  assert not wrong, "\n".join(wrong)


def test_the_checks_see_the_commands():
  commands = [c for doc in DOCS for _, c in _shell_commands(doc) if _program(c)]
  assert len(commands) >= 40, len(commands)


@pytest.mark.parametrize("doc", DOCS)
def test_every_runnable_block_is_run_or_says_what_it_needs(doc):
  errors = _marker_errors(doc, _text(doc))
  assert not errors, "\n".join(errors)


def test_the_marker_check_sees_every_kind_of_block():
  text = "\n".join(
      [
          "<!-- needs: a GPU, the demo's output -->",
          "```sh",
          "python -m albert.run_export",
          "```",
          "```python",  # no marker
          "print(1)",
          "```",
          "<!-- needs: a quantum computer -->",
          "```bash",
          "make demo",
          "```",
          "<!-- run by: tests/helpers.py -->",  # does not name the doc
          "```py",
          "pass",
          "```",
          "- a list item:",
          "",
          "  ```console",  # indented, no marker
          "  $ make test",
          "  ```",
          "```",  # bare, holding a command, no marker
          ".venv/bin/python tools/demo.py",
          "```",
          "```",  # bare, a drawing: not runnable
          "corpus.txt -> shards",
          "```",
          "```json",
          '{"a": 1}',
          "```",
      ]
  )
  errors = _marker_errors("docs/x.md", text)
  assert [e.split(": ", 2)[1] for e in errors] == [
      "a ```python block without a marker on the line before",
      "unknown need 'a quantum computer'",
      "run by tests/helpers.py",
      "a ```console block without a marker on the line before",
      "a ``` block without a marker on the line before",
  ], errors
  assert [e.split(": ")[0] for e in errors] == [
      f"docs/x.md:{line}" for line in (5, 9, 13, 18, 21)
  ], errors


def test_the_marker_check_sees_the_blocks():
  blocks = [
      b for doc in DOCS for b in _blocks(_text(doc)) if _runnable(b[1], b[2])
  ]
  assert len(blocks) >= 50, len(blocks)
