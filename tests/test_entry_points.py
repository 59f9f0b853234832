"""The documented entry points stay as they are: `tools/NAME.py`, `python -m
albert.NAME` and the `albert-*` console scripts each run `run()` of
albert/cli/NAME.py, and the main programs keep the names of their flags.

tests/testdata/entry_points.json records them. One that is gone (renamed or
dropped) fails with a line naming it; a new one is allowed, and a warning
says to record it.
"""

import ast
import json
import os
import runpy
import sys
import types
import warnings

import pytest

import albert.cli
from tests import helpers

try:
  import tomllib
except ImportError:  # Python 3.10
  import tomli as tomllib

RECORD = "tests/testdata/entry_points.json"
with open(os.path.join(helpers.REPO, RECORD), encoding="utf-8") as _f:
  RECORDED = json.load(_f)
_CLI = os.path.join(helpers.REPO, "albert", "cli")


def _stems(folder):
  return sorted(
      name[:-3]
      for name in os.listdir(os.path.join(helpers.REPO, folder))
      if name.endswith(".py") and name != "__init__.py"
  )


TOOLS = _stems("tools")
# `python -m albert.NAME`: the albert/NAME.py of an albert/cli program.
MODULES = sorted(set(_stems("albert")) & set(_stems("albert/cli")))
with open(os.path.join(helpers.REPO, "pyproject.toml"), "rb") as _f:
  SCRIPTS = tomllib.load(_f)["project"]["scripts"]


def _ask_to_record(news):
  """A warning for each new entry point or flag: allowed, to be recorded."""
  for new in sorted(news):
    warnings.warn(f"{new} is new: record it in {RECORD}", stacklevel=2)


@pytest.mark.parametrize(
    "kind, found", [("tools", TOOLS), ("modules", MODULES)]
)
def test_no_recorded_entry_point_is_gone(kind, found):
  gone = [
      f"{kind}: {name} is gone ({RECORD} records it)"
      for name in RECORDED[kind]
      if name not in found
  ]
  assert not gone, "\n".join(gone)
  _ask_to_record(f"{kind}: {name}" for name in set(found) - set(RECORDED[kind]))


def test_console_scripts_are_the_recorded_ones():
  changed = [
      f"console script {name} = {SCRIPTS.get(name, 'gone')!r}, recorded "
      f"{target!r} ({RECORD})"
      for name, target in RECORDED["scripts"].items()
      if SCRIPTS.get(name) != target
  ]
  assert not changed, "\n".join(changed)
  _ask_to_record(
      f"console script {name}"
      for name in set(SCRIPTS) - set(RECORDED["scripts"])
  )


def _defines_run(program):
  """Whether albert/cli/PROGRAM.py exists and defines `run` at top level."""
  path = os.path.join(_CLI, f"{program}.py")
  if not os.path.isfile(path):
    return False
  with open(path, encoding="utf-8") as f:
    tree = ast.parse(f.read())
  return any(
      isinstance(node, ast.FunctionDef) and node.name == "run"
      for node in tree.body
  )


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_console_script_calls_run_of_a_cli_program(name):
  module, _, function = SCRIPTS[name].partition(":")
  package, _, program = module.rpartition(".")
  assert name.startswith("albert-"), name
  assert package == "albert.cli" and function == "run", SCRIPTS[name]
  assert _defines_run(program), f"{name}: albert/cli/{program}.py has no run()"


def _runs(monkeypatch, execute):
  """The albert/cli programs whose `run()` `execute()` calls, in order: each
  program is a stand-in here, so none really runs."""
  calls = []
  for program in _stems("albert/cli"):
    stand_in = types.ModuleType(f"albert.cli.{program}")
    stand_in.run = lambda *args, program=program: calls.append(
        f"albert.cli.{program}.run({', '.join(map(repr, args))})"
    )
    monkeypatch.setitem(sys.modules, stand_in.__name__, stand_in)
    monkeypatch.setattr(albert.cli, program, stand_in, raising=False)
  execute()
  return calls


@pytest.mark.parametrize("name", TOOLS)
def test_tool_runs_its_cli_program(name, monkeypatch):
  path = helpers.tool(name)
  assert _defines_run(name), f"{path}: albert/cli/{name}.py has no run()"
  imported = _runs(monkeypatch, lambda: runpy.run_path(path, run_name="x"))
  assert not imported, f"tools/{name}.py, imported, calls {imported}"
  ran = _runs(monkeypatch, lambda: runpy.run_path(path, run_name="__main__"))
  assert ran == [f"albert.cli.{name}.run()"], f"tools/{name}.py calls {ran}"


@pytest.mark.parametrize("name", MODULES)
def test_python_m_module_runs_its_cli_program(name, monkeypatch):
  module = f"albert.{name}"
  assert _defines_run(name), f"{module}: albert/cli/{name}.py has no run()"
  ran = _runs(
      monkeypatch,
      lambda: runpy.run_module(module, run_name="__main__", alter_sys=False),
  )
  assert ran == [f"albert.cli.{name}.run()"], f"python -m {module} calls {ran}"


@pytest.mark.parametrize("program", sorted(RECORDED["flags"]))
def test_main_program_keeps_its_flags(program):
  own = helpers.program_flags(program).own
  recorded = set(RECORDED["flags"][program])
  gone = [
      f"{program}: flag --{flag} is renamed or dropped ({RECORD} records it)"
      for flag in sorted(recorded - own)
  ]
  assert not gone, "\n".join(gone)
  _ask_to_record(f"{program}: flag --{flag}" for flag in own - recorded)
