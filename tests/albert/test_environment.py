"""albert/environment.py: the installation checks `import albert` runs."""

import types

import official
from albert import environment
from tests import helpers


def test_lockstep_versions_must_agree():
  line = environment.version_mismatch(
      {
          "tensorflow": "2.21.0",
          "tf-keras": "2.21.0",
          "tensorflow-text": "2.20.1",
      }
  )
  assert line == (
      "albert: tensorflow 2.21.0 and tensorflow-text 2.20.1 do not match "
      "(their major.minor versions must agree, or ops fail to load); fix: "
      "pip install 'tensorflow-text==2.21.*'"
  )
  line = environment.version_mismatch(
      {"tf-nightly": "2.22.0", "tf-keras": "2.21.0"}
  )
  assert "tf-nightly 2.22.0 and tf-keras 2.21.0" in line
  assert "'tf-keras==2.22.*'" in line
  for ok in (
      {
          "tensorflow": "2.21.0",
          "tensorflow-text": "2.21.1",
          "tf-keras": "2.21.0",
      },
      {"tensorflow-text": "2.20.0"},  # no TensorFlow: nothing to compare
      {},
  ):
    assert environment.version_mismatch(ok) is None
  # This environment is consistent.
  versions = environment.installed_versions()
  assert {"tensorflow", "tf-keras", "tensorflow-text"} <= set(versions)
  assert environment.version_mismatch(versions) is None


def test_another_official_package_is_one_line(tmp_path):
  assert environment.foreign_official(official) is None
  other = types.ModuleType("official")
  other.__file__ = "/site-packages/official/__init__.py"
  line = environment.foreign_official(other)
  assert "\n" not in line and "/site-packages/official" in line
  assert "tf-models-official" in line
  # tf-models-official's package first on the path: `import albert` fails
  # with that line, before anything else is imported.
  fake = tmp_path / "official"
  fake.mkdir()
  (fake / "__init__.py").write_text("")
  run = helpers.run(
      ["-c", "import albert"],
      env=dict(helpers.ENV, PYTHONPATH=f"{tmp_path}:{helpers.REPO}"),
      cwd=tmp_path,
  )
  assert run.returncode == 1
  last = run.stderr.strip().splitlines()[-1]
  assert last.startswith(
      "ImportError: albert: the 'official' package at "
  ), last
  assert str(fake) in last
