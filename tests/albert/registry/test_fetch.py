"""Released models by name (albert/registry), against a loopback server that
serves a tiny model in the real layouts: the original release's tarball
(`albert_base/` holding albert_config.json, model.ckpt-best.*, the
SentencePiece model) and a Hugging Face repository (`REPO/resolve/REV/...`).
Nothing here reaches beyond 127.0.0.1."""

import hashlib
import io
import json
import os
import subprocess
import tarfile

import numpy as np
import pytest

from albert import model_dir as model_dir_lib
from albert.checkpoint_conversion import convert
from albert.checkpoint_conversion import huggingface
from albert.checkpoint_conversion import original
from albert.finetuning import training as finetuning
from albert.modeling.config import AlbertConfig
from albert.modeling.pretrainer import AlbertPretrainer
from albert.modeling.weight_names import pretrainer_weights
from albert.registry import catalog
from albert.registry import fetch as fetch_lib
from official.io import download as download_lib
from tests import helpers
from tests.albert.registry.loopback import Server

TINY = dict(
    vocab_size=50,
    embedding_size=8,
    hidden_size=16,
    num_layers=2,
    num_heads=4,
    intermediate_size=32,
    max_position_embeddings=16,
    hidden_act="gelu_new",
)
TARBALL = "/albert_base_v2.tar.gz"
HF_REPO = "/albert/albert-base-v2/resolve/main/"


def _weights(model_dir):
  pretrainer, _ = model_dir_lib.load_pretrainer(model_dir)
  return {n: v.numpy() for n, v in pretrainer_weights(pretrainer).items()}


@pytest.fixture(scope="module")
def released(tmp_path_factory, spm_model):
  """The tiny model's weights, its release tarball and its transformers
  repository files."""
  root = tmp_path_factory.mktemp("released")
  pretrainer = AlbertPretrainer.from_config_object(AlbertConfig(**TINY))
  rng = np.random.default_rng(0)
  for variable in pretrainer.weights:
    variable.assign_add(0.1 * rng.normal(size=variable.shape).astype("f4"))
  ours = str(root / "ours")
  model_dir_lib.write_model_dir(ours, pretrainer, step=3)
  tf1 = str(root / "tf1")
  original.to_original(checkpoint=ours, output_dir=tf1)
  buffer = io.BytesIO()
  with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
    for name in sorted(os.listdir(tf1)):
      tar.add(os.path.join(tf1, name), f"albert_base/{name}")
    tar.add(spm_model, "albert_base/30k-clean.model")
  hf = str(root / "hf")
  huggingface.to_huggingface(checkpoint=ours, output_dir=hf)
  repo = {
      name: open(os.path.join(hf, name), "rb").read() for name in os.listdir(hf)
  }
  repo["spiece.model"] = open(spm_model, "rb").read()
  return dict(weights=_weights(ours), tarball=buffer.getvalue(), repo=repo)


@pytest.fixture
def server(released, monkeypatch, tmp_path):
  """The loopback server with both layouts, the cache in tmp_path, and the
  endpoints pointed at the server."""
  server = Server()
  server.files[TARBALL] = released["tarball"]
  for name, data in released["repo"].items():
    server.files[HF_REPO + name] = data
  monkeypatch.setenv(fetch_lib.CACHE_ENV, str(tmp_path / "cache"))
  monkeypatch.setenv(catalog.MODELS_ENDPOINT_ENV, server.url)
  monkeypatch.setenv(catalog.HF_ENDPOINT_ENV, server.url)
  for name in fetch_lib.OFFLINE_ENVS + (catalog.REGISTRY_ENV,):
    monkeypatch.delenv(name, raising=False)
  yield server
  server.close()


def _assert_same_weights(model_dir, expected):
  got = _weights(model_dir)
  assert sorted(got) == sorted(expected)
  for name, value in expected.items():
    np.testing.assert_array_equal(got[name], value, err_msg=name)


def test_registry_names_the_released_models():
  entries = catalog.load()
  for version in ("v1", "v2"):
    for size in ("base", "large", "xlarge", "xxlarge"):
      entry = entries[f"albert_{size}_{version}"]
      kinds = [s.kind for s in entry.sources]
      assert kinds == ["original", "huggingface", "kaggle"], entry
      assert entry.sources[1].repo == f"albert/albert-{size}-{version}"
      assert entry.tokenizer == "sentencepiece"
  for size in ("base", "large", "xlarge", "xxlarge"):
    entry = entries[f"albert_{size}_zh"]
    assert entry.tokenizer == "wordpiece"
    assert entry.sources[0].file == f"albert_{size}_zh.tar.gz"
  assert entries["albert_base_v2"].sources[0].url() == (
      f"{catalog.MODELS_ENDPOINT}/albert_base_v2.tar.gz"
  )
  assert any("albert_xxlarge_zh" in line for line in catalog.table())


def test_a_name_is_fetched_converted_once_and_then_read_from_the_cache(
    server, released
):
  path = fetch_lib.fetch("albert_base_v2", progress=None)
  _assert_same_weights(path, released["weights"])
  assert os.path.isfile(os.path.join(path, "30k-clean.model"))
  record = json.load(open(os.path.join(path, fetch_lib.RECORD_FILE)))
  assert record["sha256"] == hashlib.sha256(released["tarball"]).hexdigest()
  assert record["source"] == f"{server.url}{TARBALL}"
  downloads = os.path.join(fetch_lib.cache_dir(), "downloads")
  assert not os.path.exists(os.path.join(downloads, "albert_base_v2"))
  assert len(server.requests) == 1
  assert fetch_lib.fetch("albert_base_v2", progress=None) == path
  assert fetch_lib.resolve("albert_base_v2") == path
  assert len(server.requests) == 1  # the second fetch made no request


def test_fine_tuning_from_a_name_needs_no_size_or_tokenizer_flag(
    server, released
):
  path = fetch_lib.fetch("albert_base_v2", progress=None)
  recipe = "gin/finetune/text_classification.gin"
  short = ["TextClassificationTask.seq_length = 16"]
  task = finetuning.build_task(
      gin_file=[recipe], gin_param=short, init_checkpoint=path
  )
  assert task.config.hidden_size == TINY["hidden_size"]
  assert task.config.num_layers == TINY["num_layers"]
  assert task.config.vocab_size == TINY["vocab_size"]
  assert task.spm_model_file == os.path.join(path, "30k-clean.model")
  # What the flags and gin give still wins.
  task = finetuning.build_task(
      gin_file=[recipe, "gin/base.gin"],
      gin_param=short,
      init_checkpoint=path,
      spm_model_file="other.model",
  )
  assert task.config.hidden_size == 768
  assert task.spm_model_file == "other.model"


def test_a_failing_source_falls_back_to_the_next(server, released):
  del server.files[TARBALL]  # the bucket answers 404: the hub is next
  path = fetch_lib.fetch("albert_base_v2", progress=None)
  _assert_same_weights(path, released["weights"])
  assert os.path.isfile(os.path.join(path, "spiece.model"))
  assert server.gets(TARBALL) == [None]
  assert server.gets(HF_REPO + "model.safetensors") == [None]


def test_a_transformers_repository_by_url(server, released):
  path = fetch_lib.fetch("hf://albert/albert-base-v2", progress=None)
  _assert_same_weights(path, released["weights"])
  assert path.endswith("hf--albert--albert-base-v2--main")
  with pytest.raises(fetch_lib.FetchError, match="HTTP 404"):
    fetch_lib.fetch("hf://albert/albert-base-v2@other", progress=None)
  with pytest.raises(fetch_lib.FetchError, match="not hf://OWNER/REPO"):
    fetch_lib.fetch("hf://just-a-name", progress=None)


def test_a_local_archive_and_directory(server, released, tmp_path):
  archive = tmp_path / "albert_base_v2.tar.gz"
  archive.write_bytes(released["tarball"])
  path = fetch_lib.fetch(str(archive), progress=None)
  _assert_same_weights(path, released["weights"])
  assert fetch_lib.fetch(path) == path  # a model directory is itself
  assert server.requests == []
  (tmp_path / "junk").mkdir()
  with pytest.raises(fetch_lib.FetchError, match="neither the original"):
    fetch_lib.fetch(str(tmp_path / "junk"), progress=None)


def test_offline_reads_only_the_cache(server, monkeypatch):
  monkeypatch.setenv("ALBERT_TF2_OFFLINE", "1")
  with pytest.raises(fetch_lib.FetchError) as error:
    fetch_lib.fetch("albert_base_v2", progress=None)
  message = str(error.value)
  assert "\n" not in message and "not in the cache" in message
  assert fetch_lib.model_path("albert_base_v2") in message
  assert server.requests == []
  monkeypatch.delenv("ALBERT_TF2_OFFLINE")
  path = fetch_lib.fetch("albert_base_v2", progress=None)
  monkeypatch.setenv("HF_HUB_OFFLINE", "1")
  assert fetch_lib.fetch("albert_base_v2", progress=None) == path
  assert len(server.requests) == 1


def test_a_digest_mismatch_is_refused_and_the_file_removed(
    server, released, tmp_path, monkeypatch
):
  registry = tmp_path / "registry.json"
  good = hashlib.sha256(released["tarball"]).hexdigest()
  registry.write_text(
      json.dumps(
          {
              "models": {
                  "mirrored": {
                      "description": "the tiny model, digest known",
                      "size": None,
                      "language": "en",
                      "tokenizer": "sentencepiece",
                      "tokenizer_file": "30k-clean.model",
                      "sources": [
                          {
                              "kind": "original",
                              "file": "albert_base_v2.tar.gz",
                              "sha256": good,
                          }
                      ],
                  }
              }
          }
      )
  )
  monkeypatch.setenv(catalog.REGISTRY_ENV, str(registry))
  corrupt = bytearray(released["tarball"])
  corrupt[len(corrupt) // 2] ^= 1
  server.files[TARBALL] = bytes(corrupt)
  with pytest.raises(fetch_lib.FetchError, match=f"not the expected {good}"):
    fetch_lib.fetch("mirrored", progress=None)
  downloads = os.path.join(fetch_lib.cache_dir(), "downloads", "mirrored")
  assert os.listdir(downloads) == []
  assert not os.path.exists(fetch_lib.model_path("mirrored"))
  server.files[TARBALL] = released["tarball"]
  path = fetch_lib.fetch("mirrored", progress=None)
  _assert_same_weights(path, released["weights"])


def test_an_interrupted_transfer_resumes_with_a_range_request(server, tmp_path):
  data = bytes(range(256)) * 4000  # 1 MB
  server.files["/blob"] = data
  server.cut["/blob"] = 300_000
  server.headers["/blob"] = {
      "X-Linked-Etag": f'"{hashlib.sha256(data).hexdigest()}"'
  }
  path = str(tmp_path / "blob")
  waits = []
  digest = download_lib.download(
      server.url + "/blob", path, progress=None, sleep=waits.append
  )
  assert open(path, "rb").read() == data and len(waits) == 1
  assert digest == hashlib.sha256(data).hexdigest()
  assert server.gets("/blob") == [None, "bytes=300000-"]
  # Across processes: the bytes a killed fetch left are resumed.
  (tmp_path / "again.part").write_bytes(data[:123_456])
  download_lib.download(
      server.url + "/blob", str(tmp_path / "again"), progress=None
  )
  assert (tmp_path / "again").read_bytes() == data
  assert server.gets("/blob")[-1] == "bytes=123456-"
  assert not (tmp_path / "again.part").exists()
  # The server's digest is checked: a corrupted byte is refused.
  server.files["/blob"] = data[:-1] + b"\x00"
  with pytest.raises(download_lib.DownloadError, match="SHA-256"):
    download_lib.download(
        server.url + "/blob", str(tmp_path / "bad"), progress=None
    )
  assert not (tmp_path / "bad.part").exists()
  assert not (tmp_path / "bad").exists()


def test_progress_shows_bytes_rate_and_eta(server, tmp_path):
  server.files["/blob"] = b"x" * 3_000_000
  stream = io.StringIO()
  download_lib.download(
      server.url + "/blob", str(tmp_path / "b"), progress=stream
  )
  lines = stream.getvalue().splitlines()
  assert len(lines) >= 2
  assert "b: 2.9 MB / 2.9 MB" in lines[-1] and "/s, ETA 0:00:00" in lines[-1]


@pytest.mark.slow
def test_two_processes_fetching_one_name_download_once(server):
  env = {
      **helpers.ENV,
      fetch_lib.CACHE_ENV: os.environ[fetch_lib.CACHE_ENV],
      catalog.MODELS_ENDPOINT_ENV: server.url,
      catalog.HF_ENDPOINT_ENV: server.url,
  }
  runs = [
      helpers.start(
          ["-m", "albert.fetch", "albert_base_v2"],
          env=env,
          stdout=subprocess.PIPE,
          stderr=subprocess.PIPE,
          text=True,
      )
      for _ in range(2)
  ]
  outputs = [run.communicate(timeout=300) for run in runs]
  assert [run.returncode for run in runs] == [0, 0], outputs
  paths = {out.strip().splitlines()[-1] for out, _ in outputs}
  assert paths == {fetch_lib.model_path("albert_base_v2")}
  assert server.gets(TARBALL) == [None]
  listing = helpers.run(["-m", "albert.fetch", "--list"], env=env)
  assert listing.returncode == 0, listing.stderr[-2000:]
  assert "albert_xxlarge_v2" in listing.stdout
  assert "cached: albert_base_v2" in listing.stdout
  bad = helpers.run(["-m", "albert.fetch", "albert_nonesuch"], env=env)
  helpers.assert_one_line(bad, "fetch", "not a model name")


def test_a_name_converts_out_as_a_model_directory_does(
    server, released, tmp_path
):
  out = convert.convert(
      target="huggingface",
      checkpoint="albert_base_v2",
      output_dir=str(tmp_path / "hf"),
  )
  assert out.endswith("model.safetensors")
  assert server.gets(TARBALL) == [None]  # fetched once, on the way
