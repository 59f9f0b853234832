"""`create_pretraining_data`: corpus -> sharded TFRecords + manifest.json.

Work is split into units: a byte-range block of the corpus (see
corpus_reader) and a group of its dupe_factor passes (see
block_generator.pass_groups). Three phases:
1. (NSP and random_document only) workers sample the random-document pool
   from every block (document_pool).
2. Workers turn units into record files, each example scattered to a random
   shard with a random place in it (block_generator, global_shuffle).
3. The main process writes each shard from its records in every unit,
   sorted by place, one part of at most `shuffle_memory_mb` at a time.
So every shard is a uniform random sample of the whole output in random
order, memory is bounded whatever the corpus size, and the output depends on
the inputs, the config, the model and the number of shards only, never on
`num_workers` or `shuffle_memory_mb`.

Crash safety (see staging): everything is written inside a staging directory
next to the first shard, each file under a temporary name renamed when
complete. A rerun with the same inputs and options finds the same directory,
keeps finished units and shards and redoes the rest. The shards and the
manifest move into place only when all shards are done, so a failed run
leaves the previous output untouched, and bad input (found before or during
the run) leaves no output at all.
"""

import dataclasses
import hashlib
import json
import os
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from absl import logging

from albert.pretraining_data import corpus_reader
from albert.pretraining_data import document_pool
from albert.pretraining_data import documents_format
from albert.pretraining_data import global_shuffle
from albert.pretraining_data import manifest as manifest_lib
from albert.pretraining_data import shards as shards_lib
from albert.pretraining_data.block_generator import BlockStats
from albert.pretraining_data.block_generator import pass_groups
from albert.pretraining_data.data_config import PretrainingDataConfig
from official.errors import InputError
from albert.pretraining_data.progress_reporter import ProgressReporter
from albert.pretraining_data.staging import StagingDirectory
from albert.pretraining_data import worker_pool
from albert.text import tokenizers
from albert.text.tokenizers import TokenizerFile


def _fingerprint(inputs, paths, config, model_sha256, gzipped) -> str:
  key = json.dumps(
      {
          "config": config.to_dict(),
          "model": model_sha256,
          "gzip": gzipped,
          "inputs": [(p, s, os.stat(p).st_mtime_ns) for p, s in inputs],
          "outputs": paths,
      },
      sort_keys=True,
  )
  return hashlib.sha256(key.encode()).hexdigest()[:16]


class _Job:
  """One call: the plan, the staging directory and the bookkeeping."""

  def __init__(
      self,
      *,
      input_file,
      output_file,
      num_output_shards,
      manifest_file,
      config,
      model_sha256,
      gzipped,
  ):
    self.inputs = shards_lib.expand_inputs(input_file)
    self.paths = shards_lib.shard_paths(output_file, num_output_shards)
    if len(set(self.paths)) != len(self.paths):
      raise InputError(f"--output_file names a file twice: {output_file}")
    clash = set(self.paths) & {p for p, _ in self.inputs}
    if clash:
      raise InputError(f"output {sorted(clash)[0]} is also an input")
    self.config, self.gzipped = config, gzipped
    self.fingerprint = _fingerprint(
        self.inputs, self.paths, config, model_sha256, gzipped
    )
    self.blocks = corpus_reader.plan_blocks(self.inputs, config.block_bytes)
    self.groups = pass_groups(len(self.blocks), config.dupe_factor)
    self.units = [
        (b, g) for b in range(len(self.blocks)) for g in range(len(self.groups))
    ]
    out_dir = os.path.dirname(self.paths[0])
    stem = os.path.basename(
        shards_lib.split_extension(output_file.split(",")[0].strip())[0]
    )
    self.staging = StagingDirectory(
        os.path.join(out_dir, f".{stem}.partial-{self.fingerprint}")
    )
    self.manifest_path = os.path.abspath(
        manifest_file or os.path.join(out_dir, "manifest.json")
    )
    self.unit_stats: Dict[Tuple[int, int], Optional[dict]] = {}
    self.shard_done: Dict[int, Optional[dict]] = {}

  def unit_bytes(self, unit: Tuple[int, int]) -> float:
    """The unit's share of the input, for progress."""
    block = self.blocks[unit[0]]
    return (
        (block.end - block.start)
        * len(self.groups[unit[1]])
        / self.config.dupe_factor
    )

  @property
  def documents(self) -> bool:
    return self.config.output_format == "documents"

  @property
  def pool_path(self) -> Optional[str]:
    """The pool sampled before generation (examples that draw random B)."""
    if self.documents or not self.config.uses_random_documents:
      return None
    return self.staging.pool

  def resume(self, progress: ProgressReporter) -> List:
    """Reads what earlier runs finished; returns the units still to do."""
    self.staging.prepare()
    for shard in range(len(self.paths)):
      self.shard_done[shard] = self.staging.shard_marker(shard)
    tasks = []
    for unit in self.units:
      stats = self.unit_stats[unit] = self.staging.unit_stats(unit)
      if stats:
        progress.skip(
            self.unit_bytes(unit), stats["documents"], stats["examples"]
        )
      else:
        block, group = unit
        tasks.append(
            (
                self.blocks[block],
                group,
                self.groups[group],
                self.staging.path,
                len(self.paths),
                self.pool_path,
                len(self.blocks),
            )
        )
    return tasks

  def totals(self) -> Tuple[BlockStats, List[dict], dict]:
    """Summed unit counts, the manifest's shard entries and mixing."""
    totals = BlockStats()
    for unit in self.units:
      totals.add(BlockStats(**self.unit_stats[unit]))
    entries = []
    count = "num_documents" if self.documents else "num_examples"
    for shard, path in enumerate(self.paths):
      marker = self.shard_done[shard]
      entries.append(
          {
              "file": os.path.basename(path),
              count: marker["examples"],
              "num_tokens": marker["tokens"],
              # A reader's truncation check (none from older staging).
              **({"bytes": marker["bytes"]} if "bytes" in marker else {}),
          }
      )
    mixing = global_shuffle.mixing_summary(
        [self.shard_done[s] for s in range(len(self.paths))]
    )
    return totals, entries, mixing


def create_pretraining_data(
    *,
    input_file: str,
    output_file: str,
    config: PretrainingDataConfig,
    spm_model_file: Optional[str] = None,
    vocab_file: Optional[str] = None,
    tokenizer_file: Optional[TokenizerFile] = None,
    num_output_shards: int = 1,
    num_workers: Optional[int] = None,
    gzip: bool = False,
    manifest_file: Optional[str] = None,
    on_shard_done: Optional[Callable[[int], None]] = None,
    shuffle_memory_mb: float = 512,
) -> Dict:
  """Writes the pretraining TFRecords of a corpus; returns the manifest.

  Args:
    input_file: comma-separated files or globs.
    output_file: one name (with num_output_shards) or comma-separated names.
    spm_model_file: the SentencePiece model (needs [CLS], [SEP], [MASK]).
    vocab_file: else a WordPiece vocab.txt (needs [UNK] too).
    tokenizer_file: or either of them already read
      (`albert.text.tokenizers.read_file`).
    config: the generation options.
    num_output_shards: number of output files for a single output name.
    num_workers: processes (default: all cores); does not change the output.
    gzip: write gzip-compressed TFRecords (tf.data compression "GZIP").
    manifest_file: default `manifest.json` in the first shard's directory.
    on_shard_done: called with the shard index after each staged shard.
    shuffle_memory_mb: records held at once while a shard is written (a
      larger shard is written in parts); does not change the output.

  Raises:
    InputError: bad input, model or options; nothing is left behind.
  """
  if tokenizer_file is None:
    tokenizer_file = tokenizers.read_file(spm_model_file, vocab_file)
  tokenizer = tokenizer_file.build(config.do_lower_case)
  model_sha256 = tokenizer_file.sha256
  job = _Job(
      input_file=input_file,
      output_file=output_file,
      num_output_shards=num_output_shards,
      manifest_file=manifest_file,
      config=config,
      model_sha256=model_sha256,
      gzipped=gzip,
  )
  try:
    with open(job.manifest_path, encoding="utf-8") as f:
      previous = json.load(f)
  except (OSError, ValueError):
    previous = None
  if (
      previous
      and previous.get("fingerprint") == job.fingerprint
      and all(os.path.exists(p) for p in job.paths)
  ):
    logging.info("%s is up to date", job.manifest_path)
    return previous
  # Every directory the outputs and the manifest need, made before any work
  # (so the end of a long run cannot fail on a missing one) and removed
  # again, deepest first, if the input turns out to be unusable.
  created = _missing_directories(
      [os.path.dirname(p) for p in job.paths + [job.manifest_path]]
  )
  for directory in created:
    os.makedirs(directory, exist_ok=True)
  try:
    if not shuffle_memory_mb > 0:
      raise InputError(f"shuffle_memory_mb={shuffle_memory_mb} must be > 0")
    _generate(
        job,
        tokenizer_file,
        num_workers or worker_pool.default_num_workers(),
        on_shard_done,
        max(1, int(shuffle_memory_mb * (1 << 20))),
    )
    totals, shard_entries, mixing = job.totals()
    if job.documents and not totals.examples:
      raise InputError(
          f"no documents: the input has no document of at least "
          f"{documents_format.MIN_TOKENS} tokens ({totals.documents} "
          f"documents, {totals.input_tokens} tokens); check the input format "
          f"and the tokenizer ({tokenizer_file.what})"
      )
    if not totals.examples:
      raise InputError(
          f"no examples: the input has no document that gives a pair of "
          f"segments ({totals.documents} documents, {totals.input_tokens} "
          "tokens); check the input format and the tokenizer "
          f"({tokenizer_file.what})"
      )
  except InputError:
    job.staging.remove()
    for directory in reversed(created):
      if not os.listdir(directory):
        os.rmdir(directory)
    raise
  extra_files, pool_file = [], None
  if job.documents:
    if totals.short_documents:
      logging.warning(
          "%d of %d documents have fewer than %d tokens and give no pair: "
          "left out (the manifest's num_short_documents)",
          totals.short_documents,
          totals.documents,
          documents_format.MIN_TOKENS,
      )
    pool_file = _merge_pool_shares(job, totals.documents)
    if pool_file and pool_file != documents_format.POOL_FROM_SHARDS:
      extra_files.append(
          (
              pool_file,
              os.path.join(
                  os.path.dirname(job.manifest_path),
                  documents_format.RANDOM_DOCUMENTS_FILE,
              ),
          )
      )
  manifest = manifest_lib.build_manifest(
      vocabulary=documents_format.vocabulary_entry(tokenizer),
      random_documents=(
          documents_format.RANDOM_DOCUMENTS_FILE if extra_files else pool_file
      ),
      config=config,
      inputs=job.inputs,
      tokenizer=dataclasses.replace(
          tokenizer_file, path=os.path.abspath(tokenizer_file.path)
      ).describe(tokenizer),
      compression="GZIP" if gzip else "",
      totals=totals.to_dict(),
      shards=shard_entries,
      mixing=mixing,
  )
  manifest["fingerprint"] = job.fingerprint
  job.staging.commit(job.paths, job.manifest_path, manifest, extra_files)
  logging.info(
      "Wrote %d %s in %d shards; manifest %s",
      totals.examples,
      config.output_format,
      len(job.paths),
      job.manifest_path,
  )
  return manifest


def _merge_pool_shares(job: _Job, num_documents: int) -> Optional[str]:
  """The documents format's random-document pool: the blocks' shares
  merged into the staged pool file, or "shards" when the pool is every
  document (a corpus of at most document_pool_size documents: the reader
  takes them from the shards, and the disk holds no second copy), or None
  when the corpus has fewer than 2 documents."""
  if os.path.exists(job.staging.pool):
    return job.staging.pool
  shares = [
      (block.index, document_pool.DocumentPool.load(job.staging.pool_share(i)))
      for i, block in enumerate(job.blocks)
  ]
  try:
    pool = document_pool.merge(shares)
  except InputError:
    return None
  if len(pool) >= num_documents:
    return documents_format.POOL_FROM_SHARDS
  pool.save(job.staging.pool)
  return job.staging.pool


def _missing_directories(directories: Sequence[str]) -> List[str]:
  """The missing directories (and missing ancestors), parents first."""
  missing = set()
  for directory in directories:
    directory = os.path.abspath(directory)
    while not os.path.isdir(directory) and directory not in missing:
      missing.add(directory)
      directory = os.path.dirname(directory)
  return sorted(missing)


def _generate(
    job: _Job,
    tokenizer_file: TokenizerFile,
    num_workers: int,
    on_shard_done,
    memory_bytes: int,
) -> None:
  """Runs the phases still to do and stages every shard."""
  progress = ProgressReporter(sum(size for _, size in job.inputs))
  tasks = job.resume(progress)
  pool_path = job.pool_path
  if tasks and pool_path and not os.path.exists(pool_path):
    logging.info(
        "Sampling up to %d random documents from %d blocks",
        job.config.document_pool_size,
        len(job.blocks),
    )
    pool = document_pool.merge(
        list(
            worker_pool.run_units(
                [(block, len(job.blocks)) for block in job.blocks],
                tokenizer_file,
                job.config,
                num_workers,
                work=worker_pool.sample_pool,
            )
        )
    )
    pool.save(pool_path)
    logging.info("Random-document pool: %d documents", len(pool))
  for unit, stats in worker_pool.run_units(
      tasks, tokenizer_file, job.config, num_workers
  ):
    job.unit_stats[unit] = stats
    progress.update(job.unit_bytes(unit), stats["documents"], stats["examples"])
  progress.update(0, 0, 0, force=True)
  num_shards = len(job.paths)
  start, todo = time.time(), [
      s for s in range(num_shards) if not job.shard_done[s]
  ]
  for done, shard in enumerate(todo, 1):
    job.shard_done[shard] = job.staging.assemble_shard(
        shard, job.units, num_shards, job.gzipped, memory_bytes
    )
    elapsed = time.time() - start
    logging.info(
        "Shard %d/%d: %d examples (%d/%d this run, %.0f s, ETA %.0f s)",
        shard + 1,
        num_shards,
        job.shard_done[shard]["examples"],
        done,
        len(todo),
        elapsed,
        elapsed / done * (len(todo) - done),
    )
    if on_shard_done:
      on_shard_done(shard)
  job.staging.remove_unit_records(job.units)
