"""The docs stay true: every command that README.md and docs/*.md show
(`tools/X.py`, `python -m albert.X`, `albert-X`) names a program of the
package and passes only flags that program defines; every relative link
points at a file and, with `#anchor`, at a heading there.

docs/reference.md is left out: its commands are the original release's.
Blocks that the suite runs as written (docs/serving.md's TF Hub and Keras 3
examples) are run by tests/albert/serving.
"""

import functools
import json
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


def _text(doc):
  with open(os.path.join(helpers.REPO, doc), encoding="utf-8") as f:
    return f.read()


def _shell_commands(doc):
  """(line number, argv) of each command in the doc's sh blocks."""
  commands = []
  lines = _text(doc).split("\n")
  block, start = None, 0
  for number, line in enumerate(lines, 1):
    if line.startswith("```"):
      if block is None and line.strip() in ("```sh", "```bash"):
        block = []
      elif block is not None:
        for first, command in _joined(block, start):
          commands.append((first, command))
        block = None
      start = number + 1
      continue
    if block is not None:
      block.append(line)
  return commands


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
  """The albert.cli module a command runs, or None."""
  scripts = dict(_SCRIPTS.findall(_text("pyproject.toml")))
  for i, token in enumerate(argv):
    match = re.fullmatch(r"(?:\./)?tools/([a-z_]+)\.py", token)
    if match:
      return match.group(1)
    if token == "-m" and i + 1 < len(argv):
      module = argv[i + 1]
      if module.startswith("albert."):
        return module.rsplit(".", 1)[-1]
    if token in scripts and i == 0:
      return scripts[token]
  return None


@functools.lru_cache(maxsize=None)
def _flags(program):
  """(names of the flags `program` accepts, its boolean ones)."""
  script = f"""
import json
from absl import flags
import albert.cli.{program}
defined = flags.FLAGS.flags_by_module_dict()
names, booleans = [], []
for module, module_flags in defined.items():
  if module.startswith("albert.cli.") and module != "albert.cli.{program}":
    continue
  for flag in module_flags:
    names.append(flag.name)
    if flag.boolean:
      booleans.append(flag.name)
print(json.dumps([names, booleans]))
"""
  run = helpers.run(["-c", script], timeout=300)
  assert run.returncode == 0, run.stderr[-2000:]
  names, booleans = json.loads(run.stdout.strip().splitlines()[-1])
  return set(names), set(booleans)


def _unknown_flags(argv, program):
  names, booleans = _flags(program)
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
  programs = set(os.listdir(os.path.join(helpers.REPO, "albert", "cli")))
  wrong = []
  for line, argv in _shell_commands(doc):
    program = _program(argv)
    if program is None:
      continue
    if f"{program}.py" not in programs:
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
