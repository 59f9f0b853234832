"""The worker processes of `create_pretraining_data`: each holds the
tokenizer (SentencePiece or WordPiece) and config (and the random-document
pool, once loaded) and turns
units of the corpus into record files in the staging directory, or samples
its blocks' share of the pool. No TensorFlow in the workers.
"""

from concurrent import futures
import ctypes
import itertools
import multiprocessing
import os
import signal
import sys
import threading
import time
from typing import Iterator, Optional, Tuple

from albert.pretraining_data import document_pool
from albert.pretraining_data import documents_format
from albert.pretraining_data.block_generator import block_documents
from albert.pretraining_data.block_generator import BlockStats
from albert.pretraining_data.block_generator import generate_block
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.staging import StagingDirectory
from albert.text.tokenizers import TokenizerFile
from official.core.host import available_cores

_worker_state = {}


def default_num_workers() -> int:
  return available_cores()


def _exit_with_parent(parent_pid: int) -> None:
  """Ends a worker whose main process died (e.g. killed), not to linger."""
  while os.getppid() == parent_pid:
    time.sleep(1.0)
  os._exit(1)


def _die_with_parent(parent_pid: int) -> None:
  """On Linux the kernel kills the worker the moment its parent dies
  (PR_SET_PDEATHSIG), so that no orphan goes on writing into the staging
  directory a rerun is already using; elsewhere a thread polls for it."""
  if sys.platform.startswith("linux"):
    try:
      libc = ctypes.CDLL(None, use_errno=True)
      libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
      pass
  if os.getppid() != parent_pid:  # it died before the request took effect
    os._exit(1)
  threading.Thread(
      target=_exit_with_parent, args=(parent_pid,), daemon=True
  ).start()


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _init_worker(
    tokenizer_file: TokenizerFile,
    config: PretrainingDataConfig,
    parent_pid: Optional[int] = None,
) -> None:
  _worker_state["tokenizer"] = tokenizer_file.build(config.do_lower_case)
  _worker_state["config"] = config
  if parent_pid is not None:
    _die_with_parent(parent_pid)


def _pool(path: Optional[str]):
  """The random-document pool of this job, loaded once per process."""
  if path is None:
    return None
  if _worker_state.get("pool_path") != path:
    _worker_state["pool"] = document_pool.DocumentPool.load(path)
    _worker_state["pool_path"] = path
  return _worker_state["pool"]


def write_unit(task) -> Tuple[Tuple[int, int], dict]:
  """Worker: one block and group of passes -> a record file in staging.

  The documents format writes the block's documents once, and its share of
  the random-document pool beside them (before the unit counts as done).
  """
  block, group, passes, staging_path, num_shards, pool_path, num_blocks = task
  stats = BlockStats()
  config = _worker_state["config"]
  staging = StagingDirectory(staging_path)
  if config.output_format == "documents":
    documents = block_documents(block, _worker_state["tokenizer"], config)
    document_pool.sample_block(documents, block.index, num_blocks, config).save(
        staging.pool_share(block.index)
    )
    unit = (block.index, group)
    return unit, staging.write_unit(
        unit,
        documents_format.document_examples(
            documents, block.index, config, stats, num_shards
        ),
        stats,
        num_shards,
    )
  examples = generate_block(
      block,
      _worker_state["tokenizer"],
      _worker_state["config"],
      stats,
      passes=passes,
      num_shards=num_shards,
      pool=_pool(pool_path),
  )
  unit = (block.index, group)
  return unit, StagingDirectory(staging_path).write_unit(
      unit, examples, stats, num_shards
  )


def sample_pool(task) -> Tuple[int, document_pool.DocumentPool]:
  """Worker: one block -> its share of the random-document pool."""
  block, num_blocks = task
  config = _worker_state["config"]
  documents = block_documents(block, _worker_state["tokenizer"], config)
  return block.index, document_pool.sample_block(
      documents, block.index, num_blocks, config
  )


def run_units(
    tasks, tokenizer_file, config, num_workers, work=write_unit
) -> Iterator:
  """Yields work(task) for every task as they finish, in any order.

  A worker that dies (e.g. killed for memory) fails the run with
  BrokenProcessPool instead of hanging; finished blocks are kept for a rerun.
  """
  if not tasks:
    return
  if num_workers <= 1 or len(tasks) == 1:
    _init_worker(tokenizer_file, config)
    yield from map(work, tasks)
    return
  workers = min(num_workers, len(tasks))
  queue = iter(tasks)
  context = multiprocessing.get_context("spawn")  # Safe beside TF threads.
  with futures.ProcessPoolExecutor(
      workers,
      mp_context=context,
      initializer=_init_worker,
      initargs=(tokenizer_file, config, os.getpid()),
  ) as pool:
    running = {
        pool.submit(work, task) for task in itertools.islice(queue, 2 * workers)
    }
    try:
      while running:
        done, running = futures.wait(
            running, return_when=futures.FIRST_COMPLETED
        )
        for future in done:
          yield future.result()
          running.update(
              pool.submit(work, task) for task in itertools.islice(queue, 1)
          )
    finally:
      for future in running:  # On errors: start no more blocks.
        future.cancel()
