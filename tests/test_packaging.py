"""The package as users install it: its requirements, its gin recipes, and a
built wheel that runs the recipes from an empty directory."""

import logging
import os
import re
import shutil
import sysconfig

import gin
import pytest

from albert import configs
from albert.finetuning import training as finetuning  # noqa: F401 (registers the tasks with gin)
from albert.modeling.config import AlbertConfig
from official.config.gin_files import GinConfigError
from tests import helpers

try:
  import tomllib
except ImportError:  # Python 3.10
  import tomli as tomllib

# Test-only peers and tools: never imported by the package.
TEST_ONLY = (
    "torch",
    "transformers",
    "sentence_transformers",
    "apache_beam",
    "pytest",
)
# Modules of an optional extra, imported only when it is asked for
# (`create_pretraining_data --runner=...` for [beam]).
EXTRAS = {"albert.pretraining_data.beam_pipeline": "apache_beam"}


def _requirements(name):
  """The requirement lines of REPO/NAME, without comments and `-r` lines."""
  with open(os.path.join(helpers.REPO, name), encoding="utf-8") as f:
    lines = [l.split("#")[0].strip() for l in f]
  return {l.replace(" ", "") for l in lines if l and not l.startswith("-")}


def _normal(spec):
  """`tensorflow_hub==0.16.1` and `tensorflow-hub==0.16.1` are one name."""
  name, rest = re.match(r"([A-Za-z0-9_.\-\[\]]+)(.*)", spec).groups()
  return name.lower().replace("_", "-") + rest.replace(" ", "").replace(
      "'", '"'
  )


def test_requirements_files_agree_with_pyproject():
  with open(os.path.join(helpers.REPO, "pyproject.toml"), "rb") as f:
    project = tomllib.load(f)["project"]
  runtime = {_normal(s) for s in _requirements("requirements.txt")}
  assert runtime == {_normal(s) for s in project["dependencies"]}
  dev = {_normal(s) for s in _requirements("requirements-dev.txt")}
  assert dev == {_normal(s) for s in project["optional-dependencies"]["dev"]}
  extras = project["optional-dependencies"]
  for extra in ("beam", "onnx"):
    assert {_normal(s) for s in extras[extra]} <= dev, extra
  assert not {p for p in TEST_ONLY if any(s.startswith(p) for s in runtime)}


def test_no_runtime_module_imports_a_test_only_package():
  # Every module of albert/ and official/ in one fresh process (a module
  # imported by a test run would not count).
  # The commands define flags of the same names: each command's flags are
  # deleted after its import.
  script = f"""
import importlib, pkgutil, sys
from absl import flags
import albert, official
extras = {EXTRAS!r}
names = []
for package in (albert, official):
  for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    if info.name not in extras:
      before = set(flags.FLAGS)
      importlib.import_module(info.name)
      for name in set(flags.FLAGS) - before:
        delattr(flags.FLAGS, name)
      names.append(info.name)
print(len(names), sorted(m for m in {TEST_ONLY!r} if m in sys.modules))
"""
  run = helpers.run(["-c", script], timeout=300)
  assert run.returncode == 0, run.stderr[-3000:]
  count, loaded = run.stdout.strip().splitlines()[-1].split(" ", 1)
  assert int(count) > 100 and loaded == "[]", run.stdout
  # The extras' modules do need their package (else they belong above).
  for module, package in EXTRAS.items():
    path = os.path.join(helpers.REPO, *module.split(".")) + ".py"
    with open(path, encoding="utf-8") as f:
      assert f"import {package}" in f.read(), module


@pytest.fixture
def _gin_state():
  gin.clear_config()
  yield
  gin.clear_config()


@pytest.mark.parametrize(
    "name",
    ["gin/base.gin", "base.gin", "gin/finetune/mnli.gin", "finetune/mnli.gin"],
)
def test_recipes_resolve_from_any_directory(
    name, tmp_path, monkeypatch, caplog, _gin_state
):
  monkeypatch.chdir(tmp_path)
  caplog.set_level(logging.INFO)
  configs.parse([name], ["AlbertConfig.num_layers = 3"])
  assert AlbertConfig().num_layers == 3
  # gin's notes on its search ("Path not found" errors on the way) are not
  # shown.
  assert not [
      r for r in caplog.records if "resource_reader" in r.pathname
  ], caplog.text


def test_own_file_includes_packaged_ones_and_cwd_comes_first(
    tmp_path, monkeypatch, _gin_state
):
  monkeypatch.chdir(tmp_path)
  (tmp_path / "mine.gin").write_text(
      "include 'gin/base.gin'\nAlbertConfig.num_layers = 5\n"
  )
  configs.parse(["mine.gin"])
  config = AlbertConfig()
  assert (config.hidden_size, config.num_layers) == (768, 5)
  # A gin/tiny.gin of the current directory wins over the packaged one.
  (tmp_path / "gin").mkdir()
  (tmp_path / "gin" / "tiny.gin").write_text("AlbertConfig.num_layers = 7\n")
  gin.clear_config()
  configs.parse(["gin/tiny.gin"])
  assert AlbertConfig().num_layers == 7


def test_unknown_recipe_is_one_line_naming_where_it_looked(
    tmp_path, monkeypatch, _gin_state
):
  monkeypatch.chdir(tmp_path)
  with pytest.raises(GinConfigError) as info:
    configs.parse(["gin/bsae.gin"])
  message = str(info.value)
  assert "\n" not in message
  for place in (str(tmp_path), *configs.SEARCH_PATHS):
    assert place in message, message
  assert "gin/base.gin" in configs.recipes()
  assert "gin/finetune/mnli.gin" in configs.recipes()
  assert len(configs.recipes()) == len(
      [
          f
          for _, _, files in os.walk(os.path.join(helpers.REPO, "gin"))
          for f in files
          if f.endswith(".gin")
      ]
  )


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory):
  """A fresh virtual environment holding the built wheel (--no-deps) and
  seeing the test environment's packages; (its bin directory, its env)."""
  root = tmp_path_factory.mktemp("wheel")
  # Built from a copy of what the wheel is made of: a build writes build/
  # and *.egg-info next to pyproject.toml.
  source = root / "source"
  source.mkdir()
  for name in ("pyproject.toml", "README.md"):
    shutil.copy(os.path.join(helpers.REPO, name), source / name)
  for name in ("albert", "official", "gin"):
    shutil.copytree(
        os.path.join(helpers.REPO, name),
        source / name,
        symlinks=True,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
  env = {k: v for k, v in helpers.ENV.items() if k != "PYTHONPATH"}
  build = helpers.run(
      [
          "-m",
          "pip",
          "wheel",
          "--no-deps",
          "--no-build-isolation",  # this environment's setuptools: no download
          "--quiet",
          "--wheel-dir",
          root / "dist",
          source,
      ],
      timeout=300,
      cwd=root,
      env=env,
  )
  assert build.returncode == 0, build.stderr[-3000:]
  (wheel,) = (root / "dist").glob("albert_tf2-*.whl")
  venv = root / "venv"
  made = helpers.run(["-m", "venv", "--without-pip", venv], timeout=120)
  assert made.returncode == 0, made.stderr
  python = venv / "bin" / "python"
  # Installed before the venv sees the test environment (where pip would
  # find albert-tf2 installed already, editable, and do nothing).
  install = helpers.run(
      [
          "-m",
          "pip",
          "--python",
          python,
          "install",
          "--no-deps",
          "--quiet",
          wheel,
      ],
      timeout=300,
      env=env,
  )
  assert install.returncode == 0, install.stderr[-3000:]
  site = helpers.run(
      [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]
  ).stdout.strip()
  assert os.path.isdir(os.path.join(site, "albert", "gin", "finetune")), site
  # The test environment's packages (TensorFlow and the rest), after the
  # venv's own: a path line, so its editable install of albert is not used.
  with open(os.path.join(site, "test_env.pth"), "w") as f:
    f.write(sysconfig.get_path("purelib") + "\n")
  env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
  return venv / "bin", env


@pytest.mark.slow
def test_wheel_runs_its_recipes_from_an_empty_directory(
    wheel_env, corpus_path, tmp_path
):
  bin_dir, env = wheel_env
  work = tmp_path / "empty"
  work.mkdir()

  def command(name, *args, timeout=600):
    run = helpers.run(
        [str(bin_dir / name), *args], env=env, cwd=work, timeout=timeout
    )
    assert run.returncode == 0, (name, run.stderr[-3000:])
    return run

  where = helpers.run(
      [bin_dir / "python", "-c", "import albert; print(albert.__file__)"],
      env=env,
      cwd=work,
  )
  assert where.stdout.startswith(str(bin_dir.parent)), where
  with open(corpus_path, encoding="utf-8") as f:
    (work / "corpus.txt").write_text("".join(f.readlines()[:3000]))
  command(
      "albert-train-sentencepiece",
      "--input=corpus.txt",
      "--model_prefix=spm",
      "--vocab_size=500",
  )
  command(
      "albert-create-pretraining-data",
      "--input_file=corpus.txt",
      "--output_file=data/train.tfrecord",
      "--spm_model_file=spm.model",
      "--max_seq_length=32",
      "--max_predictions_per_seq=5",
      "--dupe_factor=1",
  )
  params = [
      "AlbertConfig.vocab_size=500",
      "AlbertConfig.max_position_embeddings=32",
      "PretrainTask.train_file_pattern='data/train*.tfrecord*'",
      "PretrainTask.eval_file_pattern='data/train*.tfrecord*'",
      "PretrainTask.seq_length=32",
      "PretrainTask.max_predictions_per_seq=5",
      "PretrainTask.global_batch_size=8",
      "TRAIN_STEPS=2",
      "OptimizerConfig.warmup_steps=1",
      "TrainerConfig.eval_steps=1",
  ]
  command(
      "albert-pretrain",
      "--gin_file=gin/tiny.gin",
      "--model_dir=model",
      *[f"--gin_param={p}" for p in params],
  )
  assert (work / "model" / "ckpt-2.index").exists()
  command(
      "albert-export",
      "--model_dir=model",
      "--spm_model_file=spm.model",
      "--export_dir=export",
      "--seq_length=32",
  )
  query = command(
      "albert-query-saved-model",
      "--saved_model=export/serving",
      "--fill_mask=The [MASK] returns a list.",
  )
  assert "[MASK] at token" in query.stdout, query.stdout[-2000:]
  assert sorted(p.name for p in work.iterdir()) == [
      "corpus.txt",
      "data",
      "export",
      "model",
      "spm.model",
      "spm.vocab",
  ]
