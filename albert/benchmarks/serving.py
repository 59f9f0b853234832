"""Serving latency and throughput of the raw-text SavedModel, against its own
matrix products, our ONNX export on onnxruntime and transformers: the
measuring behind
`tools/benchmark_serving.py` (its --help says what is measured).
"""

import dataclasses
import os
import statistics
import sys
import tempfile
import random
from typing import Dict, List, Sequence, Tuple

import sentencepiece as spm
import tensorflow as tf

from albert import configs
from albert.benchmarks.workers import matmul_floor
from albert.benchmarks import embedding as embedding_benchmark
from albert.benchmarks.workers import onnx_encoder
from albert.benchmarks.workers import request_mix
from albert.benchmarks.workers import saved_model
from albert.benchmarks.workers import torch_albert
from albert.modeling.config import AlbertConfig
from albert.modeling.pretrainer import AlbertPretrainer
from albert.serving import onnx_export
from albert.serving.text_serving_module import TextServingModule
from albert.serving.wordpiece_preprocessor import make_preprocessor
from official.benchmark import cpu_info
from official.benchmark import peers
from official.benchmark import turns
from official.errors import CommandError
from official.errors import InputError
from official.errors import first_line
from official.modeling import precision as precision_lib

PRECISIONS = ("float32", "bfloat16")


@dataclasses.dataclass(frozen=True)
class ServingBenchmark:
  """What to measure (the command's flags of the same names)."""

  spm_model_file: str
  gin_files: Sequence[str] = ("gin/base.gin",)
  seq_length: int = 128
  batch_size: int = 32
  repeats: int = 20
  batch_repeats: int = 3
  torch: bool = True
  onnx: bool = True
  precision: str = "float32"
  # The request mix of short texts (fixed against dynamic length).
  mix: bool = True
  mix_rounds: int = 60
  mix_tokens: Tuple[int, int] = (10, 60)


def _worker(name, module, args):
  """(name, argv) of `module` (of albert/benchmarks/workers) in a process of
  its own, for `turns.start_all`."""
  return name, [sys.executable, "-m", module.__name__] + [str(a) for a in args]


def short_texts(
    sp: spm.SentencePieceProcessor,
    count: int,
    tokens: Tuple[int, int],
    seed: int = 0,
) -> Tuple[List[str], List[int]]:
  """`count` runs of docstring words, each of a packed length ([CLS] and
  [SEP] included) drawn uniformly from `tokens`; (texts, lengths)."""
  # Lower-cased, as the export's preprocessing does: the lengths are the
  # SavedModel's.
  words = " ".join(embedding_benchmark.sample_texts(64, seed)).lower().split()
  rng = random.Random(seed)
  low, high = tokens
  texts, lengths = [], []
  while len(texts) < count:
    target = rng.randint(low, high)
    start = rng.randrange(len(words) - high)
    n, length = 0, 2
    while n < high:
      longer = len(sp.encode(" ".join(words[start : start + n + 1]))) + 2
      if longer > target:
        break
      n, length = n + 1, longer
    if length >= low:
      texts.append(" ".join(words[start : start + n]))
      lengths.append(length)
  return texts, lengths


def measure(s: ServingBenchmark) -> Dict:
  """Exports a random model of the gin size, times every worker in turns;
  the report (latencies, throughputs, paired ratios)."""
  configs.parse(s.gin_files)
  try:
    sp = spm.SentencePieceProcessor(model_file=s.spm_model_file)
    vocab = sp.get_piece_size()
  except (OSError, RuntimeError) as e:  # sentencepiece's errors name no errno
    raise InputError(
        f"cannot load --spm_model_file {s.spm_model_file}: {first_line(e)}; "
        "give a SentencePiece model (tools/train_sentencepiece.py trains one)"
    ) from e
  config = AlbertConfig().replace(vocab_size=vocab)
  c, seq, batch = config, s.seq_length, s.batch_size
  with precision_lib.policy_scope(precision_lib.serving_policy(s.precision)):
    pretrainer = AlbertPretrainer.from_config_object(config)
  cpu = cpu_info.read()
  have_torch = s.torch and peers.installed("torch", "transformers")
  have_onnx = (
      s.onnx
      and s.precision == "float32"  # the ONNX export is float32
      and peers.installed("onnx", "onnxruntime")
  )
  note = None
  if have_torch and s.precision == "bfloat16" and not cpu.bf16:
    have_torch = False
    note = (
        f"{cpu.model} has no native bfloat16 matrix instructions: "
        "PyTorch is not run under bfloat16 autocast"
    )
  workers, mix_workers = [], []  # started
  specs, mix_specs = [], []
  try:
    with tempfile.TemporaryDirectory() as tmp:
      exports = {  # name: (dynamic_length, xla)
          "saved_model": (False, True),  # fixed length, XLA: as before
      }
      if s.mix:
        exports["dynamic_length"] = (True, False)  # the default export
        exports["dynamic_length_xla"] = (True, True)  # run_export --xla
      paths = {}
      for name, (dynamic, xla) in exports.items():
        print(
            f"benchmark_serving: exporting {name} ...",
            file=sys.stderr,
            flush=True,
        )
        # The serving SavedModel of `run_export`, alone (the encoder and
        # preprocessing ones are not timed).
        module = TextServingModule(
            pretrainer,
            make_preprocessor(
                spm_model_file=s.spm_model_file,
                seq_length=seq,
                dynamic_length=dynamic,
            ),
            xla=xla,
        )
        paths[name] = os.path.join(tmp, name)
        tf.saved_model.save(module, paths[name], signatures=module.signatures())
      print(
          "benchmark_serving: loading and warming up ...",
          file=sys.stderr,
          flush=True,
      )
      specs.append(
          _worker(
              "saved_model", saved_model, [paths["saved_model"], seq, batch]
          )
      )
      onnx_paths = {}
      if have_onnx:
        onnx_paths["onnxruntime"] = onnx_export.write(
            pretrainer.encoder, os.path.join(tmp, "encoder.onnx")
        )
        onnx_paths["onnxruntime_int8"] = onnx_export.write(
            pretrainer.encoder,
            os.path.join(tmp, "encoder_int8.onnx"),
            quantize="int8",
        )
      for name, path in onnx_paths.items():
        specs.append(
            _worker(name, onnx_encoder, [path, c.vocab_size, seq, batch])
        )
      if s.mix:
        low, high = (min(n, seq) for n in s.mix_tokens)
        texts, lengths = short_texts(sp, max(s.mix_rounds, batch), (low, high))
        mix_file = request_mix.write(
            os.path.join(tmp, "mix.json"), texts, lengths
        )
        fixed = dict(paths, fixed_length=paths["saved_model"])
        for name in ("fixed_length", "dynamic_length", "dynamic_length_xla"):
          mix_specs.append(
              _worker(name, saved_model, [fixed[name], seq, batch, mix_file])
          )
        for name, path in onnx_paths.items():
          mix_specs.append(
              _worker(
                  name,
                  onnx_encoder,
                  [path, c.vocab_size, seq, batch, mix_file],
              )
          )
      sizes = (c.embedding_size, c.hidden_size, c.num_heads)
      sizes += (c.intermediate_size, c.num_layers * c.inner_group_num)
      floor_args = [*sizes, seq, batch, s.precision]
      specs.append(_worker("matmul_floor", matmul_floor, floor_args))
      if s.mix:
        # The products alone at each request's own length: how far below
        # the fixed export any export on these kernels could go.
        mix_specs.append(
            _worker("matmul_floor", matmul_floor, floor_args + [mix_file])
        )
      if have_torch:
        specs.append(
            _worker(
                "torch",
                torch_albert,
                [
                    c.vocab_size,
                    c.embedding_size,
                    c.hidden_size,
                    c.num_heads,
                    c.intermediate_size,
                    c.num_layers,
                    c.num_hidden_groups,
                    c.inner_group_num,
                    seq,
                    batch,
                    "none" if s.precision == "float32" else s.precision,
                ],
            )
        )
      # Started together (their loading and warm-up overlap; none is timed
      # before all are ready), before their files go with the directory.
      started = turns.start_all(specs + mix_specs)
      workers, mix_workers = started[: len(specs)], started[len(specs) :]
    print(
        f"benchmark_serving: timing {len(workers)} processes in turn ...",
        file=sys.stderr,
        flush=True,
    )
    one = turns.take_turns(workers, s.repeats, request="1")
    many = turns.take_turns(workers, s.batch_repeats, request=str(batch))
    if mix_workers:
      print(
          f"benchmark_serving: the request mix, {len(mix_workers)} processes "
          "in turn ...",
          file=sys.stderr,
          flush=True,
      )
      mix_one = turns.take_turns(mix_workers, s.mix_rounds, request="1")
      mix_many = turns.take_turns(
          mix_workers, s.batch_repeats, request=str(batch)
      )
  except turns.WorkerError as e:  # a worker process failed: its error line
    raise CommandError(str(e)) from e
  finally:
    finals = {w.name: w.close() for w in workers}
    mix_finals = {w.name: w.close() for w in mix_workers}

  report = {
      "seq_length": seq,
      "batch_size": batch,
      "rounds": s.repeats,
      "precision": s.precision,
      "cpu": cpu.to_dict(),
      "cpu_description": cpu.describe(),
  }
  if note:
    report["note"] = note
  for w in workers:
    report[w.name] = dict(
        w.info,
        **finals[w.name],
        latency_ms=1000 * statistics.median(one[w.name]),
        throughput_per_s=batch / statistics.median(many[w.name]),
    )
  report["floor_vs_saved_model"] = turns.paired_ratio(
      one, "matmul_floor", "saved_model"
  )
  report["saved_model_vs_floor"] = turns.paired_ratio(
      one, "saved_model", "matmul_floor"
  )
  if have_onnx:
    report["latency_vs_onnxruntime"] = turns.paired_ratio(
        one, "saved_model", "onnxruntime"
    )
    report["throughput_vs_onnxruntime"] = turns.paired_ratio(
        many, "onnxruntime", "saved_model"
    )
  if have_onnx:
    report["int8_throughput_vs_onnxruntime"] = turns.paired_ratio(
        many, "onnxruntime", "onnxruntime_int8"
    )
    report["int8_latency_vs_onnxruntime"] = turns.paired_ratio(
        one, "onnxruntime_int8", "onnxruntime"
    )
  if mix_workers:
    mix = {
        "texts": len(texts),
        "tokens": [low, high],
        "mean_tokens": statistics.mean(lengths),
        "rounds": s.mix_rounds,
    }
    for w in mix_workers:
      mix[w.name] = dict(
          w.info,
          **mix_finals[w.name],
          latency_ms=1000 * statistics.median(mix_one[w.name]),
          throughput_per_s=batch / statistics.median(mix_many[w.name]),
      )
    for name in ("dynamic_length", "dynamic_length_xla"):
      mix[f"{name}_latency_vs_fixed"] = turns.paired_ratio(
          mix_one, name, "fixed_length"
      )
      mix[f"{name}_throughput_vs_fixed"] = turns.paired_ratio(
          mix_many, "fixed_length", name
      )
    mix["floor_latency_vs_fixed"] = turns.paired_ratio(
        mix_one, "matmul_floor", "fixed_length"
    )
    mix["dynamic_length_vs_floor"] = turns.paired_ratio(
        mix_one, "dynamic_length", "matmul_floor"
    )
    if have_onnx:
      mix["latency_vs_onnxruntime"] = turns.paired_ratio(
          mix_one, "dynamic_length", "onnxruntime"
      )
      mix["int8_throughput_vs_onnxruntime"] = turns.paired_ratio(
          mix_many, "onnxruntime", "onnxruntime_int8"
      )
    report["mix"] = mix
  if have_torch:
    report["latency_vs_torch"] = turns.paired_ratio(one, "saved_model", "torch")
    report["floor_vs_torch"] = turns.paired_ratio(one, "matmul_floor", "torch")
    report["throughput_vs_torch"] = turns.paired_ratio(
        many, "torch", "saved_model"
    )
  return report


def format_report(report: Dict) -> str:
  """The report as docs/serving.md shows it."""
  lines = []
  seq, batch = report["seq_length"], report["batch_size"]
  precision, rounds = report["precision"], report["rounds"]
  have_torch = "torch" in report
  note = report.get("note")
  ours, floor = report["saved_model"], report["matmul_floor"]
  lines.append(f"CPU: {report['cpu_description']}")
  lines.append(
      f"{precision} serving SavedModel (raw text, tokenisation "
      f"included), seq {seq}: "
      f"batch 1 latency {ours['latency_ms']:.1f} ms "
      f"(median of {rounds}), "
      f"batch {batch} throughput {ours['throughput_per_s']:.1f} examples/s"
  )
  lines.append(
      f"its {precision} matrix products alone "
      f"({'XLA' if floor['xla'] else 'TF kernels, no XLA'}): batch 1 "
      f"{floor['latency_ms']:.1f} ms; the SavedModel takes "
      f"{report['saved_model_vs_floor']:.2f}x of it"
  )
  if "onnxruntime" in report:
    o = report["onnxruntime"]
    lines.append(
        f"our ONNX export on onnxruntime {o['onnxruntime']} (token ids, no "
        f"tokenisation): batch 1 {o['latency_ms']:.1f} ms, batch {batch} "
        f"{o['throughput_per_s']:.1f} examples/s; latency ratio "
        f"{report['latency_vs_onnxruntime']:.2f}x, throughput ratio "
        f"{report['throughput_vs_onnxruntime']:.2f}x"
    )
  if "onnxruntime_int8" in report:
    q = report["onnxruntime_int8"]
    lines.append(
        f"the int8 ONNX export (run_export --quantize=int8): batch 1 "
        f"{q['latency_ms']:.1f} ms, batch {batch} "
        f"{q['throughput_per_s']:.1f} examples/s; throughput "
        f"{report['int8_throughput_vs_onnxruntime']:.2f}x float32 "
        f"onnxruntime's, latency {report['int8_latency_vs_onnxruntime']:.2f}x"
    )
  if have_torch:
    t = report["torch"]
    autocast = "" if t["autocast"] == "none" else f", autocast {t['autocast']}"
    lines.append(
        f"transformers AlbertModel (token ids, no tokenisation, "
        f"{t['threads']} threads{autocast}): batch 1 {t['latency_ms']:.1f} ms, "
        f"batch {batch} {t['throughput_per_s']:.1f} examples/s"
    )
    lines.append(
        f"latency ratio {report['latency_vs_torch']:.2f}x (matrix products "
        f"alone {report['floor_vs_torch']:.2f}x), throughput ratio "
        f"{report['throughput_vs_torch']:.2f}x; medians of paired rounds"
    )
  if "mix" in report:
    lines.extend(_format_mix(report["mix"], batch))
  if note:
    lines.append(note)
  return "\n".join(lines)


def _format_mix(mix: Dict, batch: int) -> List[str]:
  low, high = mix["tokens"]
  lines = [
      f"request mix: {mix['texts']} texts of {low}-{high} tokens (mean "
      f"{mix['mean_tokens']:.1f}), batch 1 median of {mix['rounds']} rounds:"
  ]
  names = {
      "fixed_length": "SavedModel, fixed length (--nodynamic_length --xla)",
      "dynamic_length": "SavedModel, dynamic length (the default)",
      "dynamic_length_xla": "SavedModel, dynamic length, --xla",
      "onnxruntime": "ONNX float32 on onnxruntime (token ids)",
      "onnxruntime_int8": "ONNX int8 on onnxruntime (token ids)",
  }
  for name, label in names.items():
    if name in mix:
      w = mix[name]
      lines.append(
          f"  {label}: batch 1 {w['latency_ms']:.1f} ms, batch {batch} "
          f"{w['throughput_per_s']:.1f} examples/s"
      )
  for name in ("dynamic_length", "dynamic_length_xla"):
    lines.append(
        f"  {name} against fixed_length: batch 1 latency "
        f"{mix[name + '_latency_vs_fixed']:.2f}x, batch {batch} throughput "
        f"{mix[name + '_throughput_vs_fixed']:.2f}x"
    )
  floor = mix["matmul_floor"]
  lines.append(
      f"  the matrix products alone at each request's length (TF kernels): "
      f"batch 1 {floor['latency_ms']:.1f} ms, "
      f"{mix['floor_latency_vs_fixed']:.2f}x fixed_length's latency; "
      f"dynamic_length takes "
      f"{mix['dynamic_length_vs_floor']:.2f}x of them"
  )
  if "onnxruntime" in mix:
    lines.append(
        f"  dynamic_length batch 1 latency {mix['latency_vs_onnxruntime']:.2f}x"
        f" onnxruntime's; int8 onnxruntime throughput "
        f"{mix['int8_throughput_vs_onnxruntime']:.2f}x float32's"
    )
  return lines
