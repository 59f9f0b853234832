"""The same example generation as an Apache Beam pipeline.

The corpus is planned into the same byte-range blocks and pass groups as the
local path (`corpus_reader.plan_blocks`, `block_generator.pass_groups`); each
(block, passes) unit is one element, turned into serialized examples by
`generate_block` with the same seeds, so for equal
inputs, options and model the pipeline writes the same multiset of examples
as `pipeline.create_pretraining_data` (the runner decides which shard holds
which example and in what order). Files are read through Beam's FileSystems,
so inputs, model and outputs may live on gs://, s3://, hdfs://, ...

  python tools/create_pretraining_data.py --runner=DataflowRunner \
      --beam_pipeline_options="--project=P --region=R \
          --temp_location=gs://B/tmp --extra_packages=dist/albert_tf2.whl" \
      --input_file='gs://B/corpus/*.txt' \
      --output_file=gs://B/data/train.tfrecord \
      --spm_model_file=gs://B/spm.model --num_output_shards=1024
"""

import hashlib
import json
from typing import Dict, Iterator, List, Sequence, Tuple

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

from albert.pretraining_data import corpus_reader
from albert.pretraining_data import manifest as manifest_lib
from albert.pretraining_data import shards as shards_lib
from albert.pretraining_data.block_generator import BlockStats
from albert.pretraining_data.block_generator import generate_block
from albert.pretraining_data.block_generator import pass_groups
from albert.pretraining_data.data_config import PretrainingDataConfig
from official.core.errors import InputError
from albert.text.tokenization import SentencePieceTokenizer

_STATS = "stats"


def _open(path: str):
  return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)


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


class _GenerateBlock(beam.DoFn):
  """(block, passes) -> serialized examples; counts on the "stats" output."""

  def __init__(self, model_proto: bytes, config: PretrainingDataConfig):
    super().__init__()
    self._model_proto = model_proto
    self._config = config
    self._tokenizer = None

  def setup(self):
    self._tokenizer = SentencePieceTokenizer(
        self._model_proto, self._config.do_lower_case
    )

  def process(self, unit: Tuple[corpus_reader.Block, range]) -> Iterator:
    block, passes = unit
    stats = BlockStats()
    yield from generate_block(
        block, self._tokenizer, self._config, stats, passes=passes, opener=_open
    )
    yield beam.pvalue.TaggedOutput(_STATS, stats.to_dict())


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


def _write_manifest(totals: Dict[str, int], base: Dict, path: str) -> None:
  if not totals["examples"]:
    raise InputError(
        "no examples: the input has no document that gives a "
        "pair of segments"
    )
  manifest = manifest_lib.build_manifest(totals=totals, **base)
  tmp = path + ".tmp"
  with FileSystems.create(tmp) as f:
    f.write((json.dumps(manifest, indent=2) + "\n").encode("utf-8"))
  FileSystems.rename([tmp], [path])


def build_pipeline(
    pipeline: beam.Pipeline,
    *,
    blocks: Sequence,
    model_proto: bytes,
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
  prefix, suffix = shards_lib.split_extension(names[0])
  results = (
      pipeline
      | "Units"
      >> beam.Create(
          [
              (block, passes)
              for block in blocks
              for passes in pass_groups(len(blocks), config.dupe_factor)
          ]
      )
      | "Spread" >> beam.Reshuffle()
      | "Generate"
      >> beam.ParDo(_GenerateBlock(model_proto, config)).with_outputs(
          _STATS, main="examples"
      )
  )
  _ = results.examples | "Write" >> beam.io.WriteToTFRecord(
      prefix if num_output_shards > 1 else names[0],
      file_name_suffix=suffix if num_output_shards > 1 else "",
      num_shards=num_output_shards,
      shard_name_template=None if num_output_shards > 1 else "",
      compression_type=(
          CompressionTypes.GZIP if gzip else CompressionTypes.UNCOMPRESSED
      ),
  )
  _ = (
      results[_STATS]
      | "Sum" >> beam.CombineGlobally(_SumStats())
      | "Manifest" >> beam.Map(_write_manifest, manifest_base, manifest_path)
  )


def run(
    *,
    input_file: str,
    output_file: str,
    spm_model_file: str,
    config: PretrainingDataConfig,
    num_output_shards: int = 1,
    gzip: bool = False,
    manifest_file: str = None,
    runner: str = "DirectRunner",
    pipeline_args: Sequence[str] = (),
):
  """Runs the pipeline to completion. Raises InputError for bad input."""
  if num_output_shards < 1:
    raise InputError(f"num_output_shards={num_output_shards} must be >= 1")
  try:
    with FileSystems.open(
        spm_model_file, compression_type=CompressionTypes.UNCOMPRESSED
    ) as f:
      model_proto = f.read()
  except Exception as e:  # Beam raises BeamIOError / IOError by scheme.
    raise InputError(
        f"cannot read SentencePiece model {spm_model_file}: {e}"
    ) from None
  tokenizer = SentencePieceTokenizer(
      model_proto,
      config.do_lower_case,
      name=f"SentencePiece model {spm_model_file}",
  )
  inputs = expand_inputs(input_file)
  blocks = corpus_reader.plan_blocks(inputs, config.block_bytes)
  out_dir = FileSystems.split(output_file.split(",")[0].strip())[0]
  manifest_path = manifest_file or FileSystems.join(out_dir, "manifest.json")
  base = dict(
      config=config,
      inputs=inputs,
      model_path=spm_model_file,
      model_sha256=hashlib.sha256(model_proto).hexdigest(),
      vocab_size=tokenizer.vocab_size,
      compression="GZIP" if gzip else "",
      shards=[],
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
        model_proto=model_proto,
        config=config,
        output_file=output_file,
        num_output_shards=num_output_shards,
        gzip=gzip,
        manifest_path=manifest_path,
        manifest_base=base,
    )
