"""The same example generation as an Apache Beam pipeline.

The documents format (`--output_format=documents`) goes the same way, one
record per document, with its random-document pool written beside the
manifest.

The corpus is planned into the same byte-range blocks and pass groups as the
local path (`corpus_reader.plan_blocks`, `block_generator.pass_groups`); each
(block, passes) unit is one element, turned into examples by `generate_block`
with the same seeds and the same random-document pool (a side input). Each
example is keyed by its shard; a shard's examples are grouped, sorted by
their place (global_shuffle) and written by one worker. So for equal inputs,
options, model and number of shards the pipeline writes the same bytes as
`pipeline.create_pretraining_data`, whatever the runner. A worker holds one
shard's records while it writes it: size shards with --num_output_shards.
Files are read through Beam's FileSystems, so inputs, model and outputs may
live on gs://, s3://, hdfs://, ...

  python tools/create_pretraining_data.py --runner=DataflowRunner \
      --beam_pipeline_options="--project=P --region=R \
          --temp_location=gs://B/tmp --extra_packages=dist/albert_tf2.whl" \
      --input_file='gs://B/corpus/*.txt' \
      --output_file=gs://B/data/train.tfrecord \
      --spm_model_file=gs://B/spm.model --num_output_shards=1024
"""

import dataclasses
import io
import json
from typing import Dict, Iterator, List, Sequence, Tuple

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

import numpy as np

from albert.pretraining_data import corpus_reader
from albert.pretraining_data import document_pool
from albert.pretraining_data import documents_format
from albert.pretraining_data import global_shuffle
from albert.pretraining_data import manifest as manifest_lib
from albert.pretraining_data import shards as shards_lib
from albert.pretraining_data.block_generator import block_documents
from albert.pretraining_data.block_generator import BlockStats
from albert.pretraining_data.block_generator import generate_block
from albert.pretraining_data.block_generator import pass_groups
from albert.pretraining_data.data_config import PretrainingDataConfig
from albert.text import tokenizers
from albert.text.tokenizers import TokenizerFile
from official.errors import InputError
from official.io.tfrecord import TFRecordWriter

_STATS = "stats"


def _open(path: str):
  return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)


def _open_file(path: str, mode: str = "rb"):
  """`open` for the tokenizer's file, through Beam's FileSystems (any
  scheme); its errors (BeamIOError, IOError, by scheme) as OSError."""
  del mode  # read, binary
  try:
    return _open(path)
  except Exception as e:  # pylint: disable=broad-except
    raise OSError(str(e)) from None


def expand_inputs(patterns: str) -> List[Tuple[str, int]]:
  """Like shards.expand_inputs, through Beam's FileSystems (any scheme)."""
  names = [p.strip() for p in patterns.split(",") if p.strip()]
  if not names:
    raise InputError("no input: set --input_file")
  files = {}
  for pattern, result in zip(names, FileSystems.match(names)):
    if not result.metadata_list:
      raise InputError(f"input {pattern} matches no file")
    for metadata in result.metadata_list:
      files[metadata.path] = metadata.size_in_bytes
  ordered = sorted(files.items())
  if not sum(size for _, size in ordered):
    raise InputError(f"input {patterns} is empty")
  return ordered


class _Tokenizing(beam.DoFn):
  """A DoFn with the tokenizer loaded once per worker."""

  def __init__(
      self, tokenizer_file: TokenizerFile, config: PretrainingDataConfig
  ):
    super().__init__()
    self._tokenizer_file = tokenizer_file
    self._config = config
    self._tokenizer = None

  def setup(self):
    self._tokenizer = self._tokenizer_file.build(self._config.do_lower_case)


class _SamplePool(_Tokenizing):
  """block -> its share of the random-document pool."""

  def __init__(self, tokenizer_file, config, num_blocks: int):
    super().__init__(tokenizer_file, config)
    self._num_blocks = num_blocks

  def process(self, block: corpus_reader.Block) -> Iterator:
    documents = block_documents(
        block, self._tokenizer, self._config, opener=_open
    )
    yield block.index, document_pool.sample_block(
        documents, block.index, self._num_blocks, self._config
    )


class _GenerateBlock(_Tokenizing):
  """(block, group, passes) -> (shard, (sort key, record, document, tokens)).

  The sort key (order, block, group, index in the unit) orders a shard as
  the local pipeline does; the counts go to the "stats" output.
  """

  def __init__(self, tokenizer_file, config, num_shards: int):
    super().__init__(tokenizer_file, config)
    self._num_shards = num_shards

  def process(self, unit: Tuple, pool=None) -> Iterator:
    block, group, passes = unit
    stats = BlockStats()
    if self._config.output_format == "documents":
      examples = documents_format.document_examples(
          block_documents(block, self._tokenizer, self._config, opener=_open),
          block.index,
          self._config,
          stats,
          self._num_shards,
      )
    else:
      examples = generate_block(
          block,
          self._tokenizer,
          self._config,
          stats,
          passes=passes,
          opener=_open,
          num_shards=self._num_shards,
          pool=pool,
      )
    for seq, example in enumerate(examples):
      yield example.shard, (
          (example.order, block.index, group, seq),
          example.record,
          example.document,
          example.tokens,
      )
    yield beam.pvalue.TaggedOutput(_STATS, stats.to_dict())


def _write_shard(element, paths: Sequence[str], gzip: bool) -> Dict:
  """(shard, its examples) -> the file, sorted; returns its counts."""
  shard, values = element
  examples = sorted((v for v in values if v is not None), key=lambda v: v[0])
  stats = global_shuffle.ShardStats()
  path = paths[shard]
  tmp = path + ".tmp"
  with FileSystems.create(
      tmp, compression_type=CompressionTypes.UNCOMPRESSED
  ) as f:
    writer = TFRecordWriter(f, gzip)
    writer.write_all(record for _, record, _, _ in examples)
    writer.close()
  FileSystems.rename([tmp], [path])
  stats.add(
      np.array([v[2] for v in examples], dtype=np.int64),
      np.array([v[3] for v in examples], dtype=np.int64),
  )
  size = FileSystems.match([path])[0].metadata_list[0].size_in_bytes
  return {"shard": shard, "file": path, "bytes": size, **stats.to_dict()}


class _SumStats(beam.CombineFn):

  def create_accumulator(self):
    return BlockStats()

  def add_input(self, accumulator, element):
    return accumulator.add(BlockStats(**element))

  def merge_accumulators(self, accumulators):
    total = BlockStats()
    for accumulator in accumulators:
      total.add(accumulator)
    return total

  def extract_output(self, accumulator):
    return accumulator.to_dict()


def _write_pool(pool_shares, totals: Dict[str, int], path: str):
  """The documents format's pool file (as pipeline._merge_pool_shares);
  returns the manifest's "random_documents"."""
  try:
    pool = document_pool.merge(pool_shares)
  except InputError:
    return None
  if len(pool) >= totals["documents"]:
    return documents_format.POOL_FROM_SHARDS
  buffer = io.BytesIO()
  np.savez(buffer, **dataclasses.asdict(pool))
  tmp = path + ".tmp"
  with FileSystems.create(tmp) as f:
    f.write(buffer.getvalue())
  FileSystems.rename([tmp], [path])
  return FileSystems.split(path)[1]


def _write_manifest(
    totals: Dict[str, int],
    shards: List[Dict],
    base: Dict,
    path: str,
    pool_shares=None,
) -> None:
  config = base["config"]
  documents = config.output_format == "documents"
  if not totals["examples"]:
    raise InputError(
        "no documents of at least 2 tokens in the input"
        if documents
        else "no examples: the input has no document that gives a "
        "pair of segments"
    )
  shards = sorted(shards, key=lambda s: s["shard"])
  extra = {}
  if documents:
    extra["random_documents"] = _write_pool(
        pool_shares,
        totals,
        FileSystems.join(
            FileSystems.split(path)[0], documents_format.RANDOM_DOCUMENTS_FILE
        ),
    )
  count = "num_documents" if documents else "num_examples"
  manifest = manifest_lib.build_manifest(
      **extra,
      totals=totals,
      shards=[
          {
              "file": FileSystems.split(s["file"])[1],
              count: s["examples"],
              "num_tokens": s["tokens"],
              "bytes": s["bytes"],
          }
          for s in shards
      ],
      mixing=global_shuffle.mixing_summary(shards),
      **base,
  )
  tmp = path + ".tmp"
  with FileSystems.create(tmp) as f:
    f.write((json.dumps(manifest, indent=2) + "\n").encode("utf-8"))
  FileSystems.rename([tmp], [path])


def build_pipeline(
    pipeline: beam.Pipeline,
    *,
    blocks: Sequence,
    tokenizer_file: TokenizerFile,
    config: PretrainingDataConfig,
    output_file: str,
    num_output_shards: int,
    gzip: bool,
    manifest_path: str,
    manifest_base: Dict,
) -> None:
  """Adds blocks -> examples -> TFRecord shards (+ manifest) to `pipeline`."""
  names = [p.strip() for p in output_file.split(",") if p.strip()]
  if len(names) != 1:
    raise InputError(
        "the Beam runner takes one --output_file name; use "
        "--num_output_shards for several shards"
    )
  paths = shards_lib.numbered_names(names[0], num_output_shards)
  pool = pool_shares = None
  documents = config.output_format == "documents"
  if config.uses_random_documents or documents:
    # The documents format writes the pool for its reader (a second read of
    # the blocks here; the local path samples it in the same pass).
    pool_shares = (
        pipeline
        | "Blocks" >> beam.Create(list(blocks))
        | "SpreadBlocks" >> beam.Reshuffle()
        | "SamplePool"
        >> beam.ParDo(_SamplePool(tokenizer_file, config, len(blocks)))
        | "GatherPool" >> beam.combiners.ToList()
    )
  if config.uses_random_documents and not documents:
    pool = beam.pvalue.AsSingleton(
        pool_shares | "MergePool" >> beam.Map(document_pool.merge)
    )
  groups = pass_groups(len(blocks), config.dupe_factor)
  results = (
      pipeline
      | "Units"
      >> beam.Create(
          [
              (block, g, passes)
              for block in blocks
              for g, passes in enumerate(groups)
          ]
      )
      | "Spread" >> beam.Reshuffle()
      | "Generate"
      >> beam.ParDo(
          _GenerateBlock(tokenizer_file, config, num_output_shards),
          pool=pool,
      ).with_outputs(_STATS, main="examples")
  )
  every_shard = pipeline | "Shards" >> beam.Create(
      [(s, None) for s in range(num_output_shards)]
  )
  shard_counts = (
      (results.examples, every_shard)
      | "WithEmptyShards" >> beam.Flatten()
      | "ByShard" >> beam.GroupByKey()
      | "Write" >> beam.Map(_write_shard, paths, gzip)
      | "ShardList" >> beam.combiners.ToList()
  )
  totals = results[_STATS] | "Sum" >> beam.CombineGlobally(_SumStats())
  _ = totals | "Manifest" >> beam.Map(
      _write_manifest,
      beam.pvalue.AsSingleton(shard_counts),
      manifest_base,
      manifest_path,
      beam.pvalue.AsSingleton(pool_shares) if documents else None,
  )


def run(
    *,
    input_file: str,
    output_file: str,
    config: PretrainingDataConfig,
    spm_model_file: str = None,
    vocab_file: str = None,
    num_output_shards: int = 1,
    gzip: bool = False,
    manifest_file: str = None,
    runner: str = "DirectRunner",
    pipeline_args: Sequence[str] = (),
):
  """Runs the pipeline to completion. Raises InputError for bad input."""
  if num_output_shards < 1:
    raise InputError(f"num_output_shards={num_output_shards} must be >= 1")
  tokenizer_file = tokenizers.read_file(
      spm_model_file, vocab_file, opener=_open_file
  )
  tokenizer = tokenizer_file.build(config.do_lower_case)
  inputs = expand_inputs(input_file)
  blocks = corpus_reader.plan_blocks(inputs, config.block_bytes)
  out_dir = FileSystems.split(output_file.split(",")[0].strip())[0]
  manifest_path = manifest_file or FileSystems.join(out_dir, "manifest.json")
  base = dict(
      config=config,
      inputs=inputs,
      vocabulary=documents_format.vocabulary_entry(tokenizer),
      tokenizer=tokenizer_file.describe(tokenizer),
      compression="GZIP" if gzip else "",
  )
  if runner.lower() in ("direct", "directrunner"):
    # Beam's DirectRunner first tries to download the Prism runner binary;
    # run the in-process Python runner it falls back to, downloading nothing.
    runner = "FnApiRunner"
  options = PipelineOptions(list(pipeline_args), runner=runner)
  with beam.Pipeline(options=options) as pipeline:
    build_pipeline(
        pipeline,
        blocks=blocks,
        tokenizer_file=tokenizer_file,
        config=config,
        output_file=output_file,
        num_output_shards=num_output_shards,
        gzip=gzip,
        manifest_path=manifest_path,
        manifest_base=base,
    )
