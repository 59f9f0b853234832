"""Test-session set-up shared by every test module.

Two logical CPU devices are configured before TensorFlow initialises its
runtime, so that MirroredStrategy tests run real multi-replica code on CPU.
"""

import gc
import os

from tests.zygote import long_lived

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# TensorFlow's runtime defaults as users get them (official/__init__.py),
# before TensorFlow loads; its objects are left out of the cyclic
# collector's passes, as the zygote's are (`pytest_collection_finish` does
# the same for the test modules and what they import).
with long_lived():
  import official  # noqa: F401
  import tensorflow as tf

_cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    _cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2
)


import pytest  # noqa: E402

from albert.pretraining_data import sample_corpus  # noqa: E402
from albert.pretraining_data.sentencepiece_trainer import (  # noqa: E402
    train_sentencepiece,
)
from albert.text.tokenization import SentencePieceTokenizer  # noqa: E402
from tests.helpers import made_once  # noqa: E402

SAMPLE_BYTES = 400_000
VOCAB_SIZE = 2000


def _sample(path):
  corpus = str(path / "sample_corpus.txt")
  sample_corpus.write_sample_corpus(corpus, max_bytes=SAMPLE_BYTES)
  train_sentencepiece(
      input_file=corpus,
      model_prefix=str(path / "spm"),
      vocab_size=VOCAB_SIZE,
      num_threads=1,
  )


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory):
  """The sample corpus and its SentencePiece model, made once per run."""
  return made_once(tmp_path_factory, "sample", _sample)


@pytest.fixture(scope="session")
def corpus_path(sample_dir):
  """About 400 KB of the standard library's docstrings, BERT input format."""
  return str(sample_dir / "sample_corpus.txt")


@pytest.fixture(scope="session")
def spm_model(sample_dir):
  """A 2,000-piece SentencePiece model with ALBERT's ids, trained on it."""
  return str(sample_dir / "spm.model")


@pytest.fixture(scope="session")
def tokenizer(spm_model):
  return SentencePieceTokenizer.from_file(spm_model, lower=True)


@pytest.fixture(autouse=True)
def _clean_gin_state():
  """Every test starts and ends without gin bindings: in-process runs
  (pretrain, finetuning.run) bind AlbertConfig & co., and tests sharing a
  process must not see each other's bindings."""
  import gin

  gin.clear_config()
  yield
  gin.clear_config()


@pytest.fixture(autouse=True)
def _restore_absl_verbosity():
  """A command's error path run in-process (`albert.cli.run_command`) turns
  absl logging down to FATAL for the rest of the process; later tests in
  the same worker must still see the log lines they check."""
  from absl import logging

  verbosity = logging.get_verbosity()
  yield
  logging.set_verbosity(verbosity)


def pytest_collection_finish(session):  # pylint: disable=unused-argument
  """Leaves what collection imported (the package, TensorFlow's submodules,
  the test modules) out of the cyclic collector's passes: it lives as long
  as the session."""
  gc.freeze()


# The order of the files and the workers' finishing times (tests/scheduling).
from tests.scheduling import pytest_collection_modifyitems  # noqa: E402,F401
from tests.scheduling import pytest_sessionfinish  # noqa: E402,F401
from tests.scheduling import pytest_terminal_summary  # noqa: E402,F401
from tests.scheduling import pytest_testnodedown  # noqa: E402,F401
