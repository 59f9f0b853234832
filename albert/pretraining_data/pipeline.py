"""`create_pretraining_data`: corpus -> sharded TFRecords + manifest.json.

Work is split into byte-range blocks (see corpus_reader); worker processes
turn blocks into record files; the main process concatenates each shard's
blocks in block order as soon as they are all done. So the output depends
on the inputs, the config and the model only, never on `num_workers`.

Crash safety: everything is written inside a staging directory next to the
first shard (`.STEM.partial-FINGERPRINT/`), each file under a temporary name
renamed when complete. A rerun with the same inputs and options finds the
same directory, keeps finished blocks and shards and redoes the rest. The
shards and the manifest move into place only when all shards are done, so a
failed run leaves the previous output untouched, and bad input (detected
before or during the run) leaves no output at all.
"""

from concurrent import futures
import dataclasses
import glob
import hashlib
import itertools
import json
import multiprocessing
import os
import shutil
from typing import Callable, Dict, Iterator, List, Optional, Tuple

from absl import logging

from albert.pretraining_data import corpus_reader
from albert.pretraining_data import manifest as manifest_lib
from albert.pretraining_data import shards as shards_lib
from albert.pretraining_data.block_generator import BlockStats
from albert.pretraining_data.block_generator import generate_block
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.pretraining_data.errors import InputError
from albert.pretraining_data.progress import ProgressReporter
from albert.pretraining_data.tfrecord_writer import TFRecordWriter
from albert.pretraining_data.tokenization import SentencePieceTokenizer

_COPY_BYTES = 1 << 20
_worker_state = {}


def default_num_workers() -> int:
  try:
    return len(os.sched_getaffinity(0))
  except AttributeError:  # Not on Linux.
    return os.cpu_count() or 1


def _tmp_name(path: str) -> str:
  return f"{path}.tmp-{os.getpid()}"


def _part_path(staging: str, block_index: int) -> str:
  return os.path.join(staging, f"block-{block_index:06d}.rec")


def _staged_shard(staging: str, shard: int) -> str:
  return os.path.join(staging, f"shard-{shard:05d}.rec")


def _init_worker(model_proto: bytes, config: PretrainingDataConfig) -> None:
  _worker_state["tokenizer"] = SentencePieceTokenizer(
      model_proto, config.do_lower_case)
  _worker_state["config"] = config


def _write_block(task: Tuple[corpus_reader.Block, str]) -> Tuple[int, dict]:
  """Worker: one block -> staging/block-N.rec (+ .json, written last)."""
  block, staging = task
  stats = BlockStats()
  part = _part_path(staging, block.index)
  with open(_tmp_name(part), "wb") as f:
    writer = TFRecordWriter(f)
    writer.write_all(generate_block(block, _worker_state["tokenizer"],
                                    _worker_state["config"], stats))
  os.replace(_tmp_name(part), part)
  result = stats.to_dict()
  manifest_lib.write_json_atomic(part + ".json", result)
  return block.index, result


def _run_blocks(tasks, model_proto, config, num_workers) -> Iterator:
  """Yields (block index, stats) as blocks finish, in any order.

  A worker that dies (e.g. killed for memory) fails the run with
  BrokenProcessPool instead of hanging; finished blocks are kept for a rerun.
  """
  if not tasks:
    return
  if num_workers <= 1 or len(tasks) == 1:
    _init_worker(model_proto, config)
    yield from map(_write_block, tasks)
    return
  workers = min(num_workers, len(tasks))
  queue = iter(tasks)
  context = multiprocessing.get_context("spawn")  # Safe beside TF threads.
  with futures.ProcessPoolExecutor(workers, mp_context=context,
                                   initializer=_init_worker,
                                   initargs=(model_proto, config)) as pool:
    running = {pool.submit(_write_block, task)
               for task in itertools.islice(queue, 2 * workers)}
    try:
      while running:
        done, running = futures.wait(running,
                                     return_when=futures.FIRST_COMPLETED)
        for future in done:
          yield future.result()
          running.update(pool.submit(_write_block, task)
                         for task in itertools.islice(queue, 1))
    finally:
      for future in running:  # On errors: do not start more blocks.
        future.cancel()


def _read_json(path: str) -> Optional[dict]:
  try:
    with open(path, encoding="utf-8") as f:
      return json.load(f)
  except (OSError, ValueError):
    return None


def _assemble_shard(staging: str, shard: int, blocks: List[int],
                    gzipped: bool) -> None:
  """Concatenates finished block files into the staged shard."""
  staged = _staged_shard(staging, shard)
  with open(_tmp_name(staged), "wb") as raw:
    writer = TFRecordWriter(raw, gzipped)
    for index in blocks:
      with open(_part_path(staging, index), "rb") as part:
        for chunk in iter(lambda: part.read(_COPY_BYTES), b""):  # pylint: disable=cell-var-from-loop
          writer.write_framed(chunk, 0)
    writer.close()
    raw.flush()
    os.fsync(raw.fileno())
  os.replace(_tmp_name(staged), staged)


def _move(src: str, dst: str) -> None:
  try:
    os.replace(src, dst)
  except OSError:  # Another file system: copy under a temporary name.
    shutil.copyfile(src, _tmp_name(dst))
    os.replace(_tmp_name(dst), dst)
    os.remove(src)


@dataclasses.dataclass
class _Run:
  """What one call works on."""
  inputs: List[Tuple[str, int]]
  paths: List[str]
  blocks: List[corpus_reader.Block]
  staging: str
  manifest_path: str
  fingerprint: str


def _plan(input_file, output_file, num_output_shards, manifest_file,
          config, model_sha256, gzipped) -> _Run:
  inputs = shards_lib.expand_inputs(input_file)
  paths = shards_lib.shard_paths(output_file, num_output_shards)
  if len(set(paths)) != len(paths):
    raise InputError(f"--output_file names a file twice: {output_file}")
  clash = set(paths) & {p for p, _ in inputs}
  if clash:
    raise InputError(f"output {sorted(clash)[0]} is also an input")
  key = json.dumps({
      "config": config.to_dict(), "model": model_sha256, "gzip": gzipped,
      "inputs": [(p, s, os.stat(p).st_mtime_ns) for p, s in inputs],
      "outputs": paths}, sort_keys=True)
  fingerprint = hashlib.sha256(key.encode()).hexdigest()[:16]
  out_dir = os.path.dirname(paths[0])
  first_name = output_file.split(",")[0].strip()
  stem = os.path.basename(shards_lib.split_extension(first_name)[0])
  return _Run(inputs=inputs, paths=paths,
              blocks=corpus_reader.plan_blocks(inputs, config.block_bytes),
              staging=os.path.join(out_dir, f".{stem}.partial-{fingerprint}"),
              manifest_path=os.path.abspath(
                  manifest_file or os.path.join(out_dir, "manifest.json")),
              fingerprint=fingerprint)


def _prepare_staging(run: _Run) -> None:
  prefix = run.staging.rsplit("-", 1)[0]
  for stale in glob.glob(glob.escape(prefix) + "-*"):
    if stale != run.staging:
      logging.info("Removing %s, left by a run with other options", stale)
      shutil.rmtree(stale, ignore_errors=True)
  os.makedirs(run.staging, exist_ok=True)
  for tmp in glob.glob(os.path.join(glob.escape(run.staging), "*.tmp-*")):
    os.remove(tmp)


def create_pretraining_data(
    *, input_file: str, output_file: str, spm_model_file: str,
    config: PretrainingDataConfig, num_output_shards: int = 1,
    num_workers: Optional[int] = None, gzip: bool = False,
    manifest_file: Optional[str] = None,
    on_shard_done: Optional[Callable[[int], None]] = None) -> Dict:
  """Writes the pretraining TFRecords of a corpus; returns the manifest.

  Args:
    input_file: comma-separated files or globs.
    output_file: one name (with num_output_shards) or comma-separated names.
    spm_model_file: the SentencePiece model (needs [CLS], [SEP], [MASK]).
    config: the generation options.
    num_output_shards: number of output files for a single output name.
    num_workers: processes (default: all cores); does not change the output.
    gzip: write gzip-compressed TFRecords (tf.data compression "GZIP").
    manifest_file: default `manifest.json` in the first shard's directory.
    on_shard_done: called with the shard index after each staged shard.

  Raises:
    InputError: bad input, model or options; nothing is left behind.
  """
  tokenizer = SentencePieceTokenizer.from_file(spm_model_file,
                                               config.do_lower_case)
  with open(spm_model_file, "rb") as f:
    model_proto = f.read()
  model_sha256 = hashlib.sha256(model_proto).hexdigest()
  run = _plan(input_file, output_file, num_output_shards, manifest_file,
              config, model_sha256, gzip)
  previous = _read_json(run.manifest_path)
  if (previous and previous.get("fingerprint") == run.fingerprint and
      all(os.path.exists(p) for p in run.paths)):
    logging.info("%s is up to date", run.manifest_path)
    return previous
  created = [d for d in {os.path.dirname(p) for p in run.paths}
             if not os.path.isdir(d)]
  for directory in created:
    os.makedirs(directory, exist_ok=True)
  try:
    manifest = _generate(run, config, model_proto, model_sha256,
                         tokenizer.vocab_size, spm_model_file, gzip,
                         num_workers or default_num_workers(), on_shard_done)
  except InputError:
    shutil.rmtree(run.staging, ignore_errors=True)
    for directory in created:
      if not os.listdir(directory):
        os.rmdir(directory)
    raise
  return manifest


def _generate(run, config, model_proto, model_sha256, vocab_size,
              spm_model_file, gzipped, num_workers, on_shard_done) -> Dict:
  _prepare_staging(run)
  num_shards = len(run.paths)
  shard_blocks = [list(shards_lib.blocks_of_shard(s, num_shards,
                                                  len(run.blocks)))
                  for s in range(num_shards)]
  if len(run.blocks) < num_shards:
    logging.warning("%d blocks for %d shards: some shards will be empty",
                    len(run.blocks), num_shards)
  shard_done = {s: _read_json(_staged_shard(run.staging, s) + ".json")
                for s in range(num_shards)}
  block_stats = {b.index: _read_json(_part_path(run.staging, b.index) +
                                     ".json") for b in run.blocks}
  progress = ProgressReporter(sum(size for _, size in run.inputs))
  tasks = []
  for shard, blocks in enumerate(shard_blocks):
    for index in blocks:
      block = run.blocks[index]
      if shard_done[shard] or block_stats[index]:
        stats = shard_done[shard] and shard_done[shard]["blocks"][str(index)]
        stats = stats or block_stats[index]
        block_stats[index] = stats
        progress.skip(block.end - block.start, stats["documents"],
                      stats["examples"])
      else:
        tasks.append((block, run.staging))
  if not tasks:
    progress.update(0, 0, 0, force=True)

  def finish_shard(shard):
    _assemble_shard(run.staging, shard, shard_blocks[shard], gzipped)
    marker = {"blocks": {str(b): block_stats[b] for b in shard_blocks[shard]}}
    manifest_lib.write_json_atomic(_staged_shard(run.staging, shard) + ".json",
                                   marker)
    shard_done[shard] = marker
    for b in shard_blocks[shard]:
      for path in (_part_path(run.staging, b), _part_path(run.staging, b) +
                   ".json"):
        if os.path.exists(path):
          os.remove(path)
    if on_shard_done:
      on_shard_done(shard)

  for shard in range(num_shards):  # Shards whose blocks were all done.
    if not shard_done[shard] and all(block_stats[b]
                                     for b in shard_blocks[shard]):
      finish_shard(shard)
  for index, stats in _run_blocks(tasks, model_proto, config, num_workers):
    block_stats[index] = stats
    block = run.blocks[index]
    progress.update(block.end - block.start, stats["documents"],
                    stats["examples"])
    shard = index % num_shards
    if all(block_stats[b] for b in shard_blocks[shard]):
      finish_shard(shard)
  progress.update(0, 0, 0, force=True)
  return _finish(run, config, block_stats, shard_blocks, model_sha256,
                 vocab_size, spm_model_file, gzipped)


def _finish(run, config, block_stats, shard_blocks, model_sha256, vocab_size,
            spm_model_file, gzipped) -> Dict:
  """Checks the totals, writes the manifest, moves everything into place."""
  totals, shard_entries = BlockStats(), []
  for shard, path in enumerate(run.paths):
    shard_total = BlockStats()
    for b in shard_blocks[shard]:
      shard_total.add(BlockStats(**block_stats[b]))
    totals.add(shard_total)
    shard_entries.append({"file": os.path.basename(path),
                          "num_examples": shard_total.examples,
                          "num_tokens": shard_total.example_tokens})
  if not totals.examples:
    raise InputError(
        f"no examples: the input has no document that gives a pair of "
        f"segments ({totals.documents} documents, {totals.input_tokens} "
        "tokens); check the input format and --spm_model_file")
  manifest = manifest_lib.build_manifest(
      config=config, inputs=run.inputs,
      model_path=os.path.abspath(spm_model_file), model_sha256=model_sha256,
      vocab_size=vocab_size, compression="GZIP" if gzipped else "",
      totals=totals.to_dict(), shards=shard_entries)
  manifest["fingerprint"] = run.fingerprint
  if os.path.exists(run.manifest_path):
    os.remove(run.manifest_path)  # No manifest while shards are replaced.
  for shard, path in enumerate(run.paths):
    staged = _staged_shard(run.staging, shard)
    if os.path.exists(staged):  # Else moved by an interrupted commit.
      _move(staged, path)
  manifest_lib.write_json_atomic(run.manifest_path, manifest)
  shutil.rmtree(run.staging, ignore_errors=True)
  logging.info("Wrote %d examples in %d shards; manifest %s",
               totals.examples, len(run.paths), run.manifest_path)
  return manifest
