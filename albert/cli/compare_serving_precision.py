r"""Does the bfloat16 serving SavedModel answer as the float32 one does?

  python tools/compare_serving_precision.py --model_dir=demo_out/model \
      --spm_model_file=demo_out/spm.model --text_file=demo_out/eval.txt \
      [--num_sentences=200] [--seq_length=128] [--json]

Exports the model twice (`--precision=float32` and `--precision=bfloat16`,
as `albert.run_export` does), then on `--num_sentences` held-out
lines of `--text_file` (lines of at least 6 words, in file order):
  - masks the middle word of each and compares `fill_mask`'s top-1 piece;
  - compares `serving_default`'s pooled_output on the unmasked line (cosine).
Exits with status 1 (one line saying which) when fewer than 98% of the top-1
answers agree or a cosine is below 0.999, the bars bfloat16 serving must meet.
"""

import json
import os
import sys
import tempfile

from absl import flags
import numpy as np
import tensorflow as tf

from albert import cli
from albert import model_dir
from albert.serving import exporter
from official.errors import InputError

MODEL_DIR = flags.DEFINE_string("model_dir", None, "Trained model directory.")
CHECKPOINT = flags.DEFINE_string(
    "checkpoint", None, "Checkpoint (default: latest in --model_dir)."
)
SPM = flags.DEFINE_string("spm_model_file", None, "Its SentencePiece model.")
TEXT = flags.DEFINE_string(
    "text_file", None, "Held-out text, one sentence or paragraph a line."
)
NUM = flags.DEFINE_integer("num_sentences", 200, "Lines to compare.")
SEQ = flags.DEFINE_integer("seq_length", 128, "Packed input length.")
JSON = flags.DEFINE_bool("json", False, "Print one JSON object.")

MIN_TOP1_AGREEMENT = 0.98
MIN_COSINE = 0.999


def held_out_lines(path: str, count: int):
  """The first `count` lines of at least 6 words, whitespace-normalised."""
  lines = []
  with open(path, encoding="utf-8") as f:
    for line in f:
      words = line.split()
      if len(words) >= 6:
        lines.append(" ".join(words))
        if len(lines) == count:
          break
  return lines


def mask_middle_word(line: str) -> str:
  words = line.split()
  words[len(words) // 2] = "[MASK]"
  return " ".join(words)


def compare(serving_a, serving_b, lines, batch_size=16):
  """(top-1 agreement, [cosine per line], largest absolute difference of
  pooled_output, serving_b's pooled_output dtype) of two serving
  SavedModels."""
  agree, cosines, diff, dtype = 0, [], 0.0, None
  for start in range(0, len(lines), batch_size):
    chunk = lines[start : start + batch_size]
    masked = tf.constant([mask_middle_word(line) for line in chunk])
    top = [
        m.signatures["fill_mask"](text=masked)["top_k_ids"][:, 0, 0].numpy()
        for m in (serving_a, serving_b)
    ]
    agree += int(np.sum(top[0] == top[1]))
    served = [
        m.signatures["serving_default"](text=tf.constant(chunk))[
            "pooled_output"
        ]
        for m in (serving_a, serving_b)
    ]
    dtype = served[1].dtype.name
    pooled = [p.numpy().astype(np.float64) for p in served]
    diff = max(diff, float(np.max(np.abs(pooled[0] - pooled[1]))))
    dots = np.sum(pooled[0] * pooled[1], axis=1)
    norms = np.linalg.norm(pooled[0], axis=1) * np.linalg.norm(
        pooled[1], axis=1
    )
    cosines.extend((dots / np.maximum(norms, 1e-30)).tolist())
  return agree / len(lines), cosines, diff, dtype


def main(argv):
  cli.unexpected_arguments(argv)
  cli.require_flags("model_dir", "spm_model_file", "text_file")
  if NUM.value < 1:
    raise InputError(f"--num_sentences={NUM.value} must be >= 1")
  lines = held_out_lines(TEXT.value, NUM.value)
  if not lines:
    raise InputError(
        f"{TEXT.value} has no line of at least 6 words: give held-out text, "
        "one sentence or paragraph a line"
    )
  with tempfile.TemporaryDirectory() as tmp:
    loaded = {}
    for precision in ("float32", "bfloat16"):
      pretrainer, _ = model_dir.load_pretrainer(
          MODEL_DIR.value, CHECKPOINT.value, precision=precision
      )
      out = os.path.join(tmp, precision)
      exporter.export(
          pretrainer,
          spm_model_file=SPM.value,
          export_dir=out,
          seq_length=SEQ.value,
      )
      loaded[precision] = tf.saved_model.load(os.path.join(out, "serving"))
    agreement, cosines, diff, dtype = compare(
        loaded["float32"], loaded["bfloat16"], lines
    )
  report = {
      "sentences": len(lines),
      "top1_agreement": agreement,
      "min_cosine": min(cosines),
      "mean_cosine": sum(cosines) / len(cosines),
      "max_abs_diff": diff,  # 0 would mean bfloat16 was not used
      "bfloat16_output_dtype": dtype,  # the signatures stay float32
  }
  passed = (
      agreement >= MIN_TOP1_AGREEMENT and report["min_cosine"] >= MIN_COSINE
  )
  report["passed"] = passed
  if JSON.value:
    print(json.dumps(report, sort_keys=True))
  else:
    print(
        f"bfloat16 vs float32 serving on {len(lines)} held-out lines: "
        f"fill_mask top-1 agreement {agreement:.1%} (bar "
        f"{MIN_TOP1_AGREEMENT:.0%}), pooled_output cosine min "
        f"{report['min_cosine']:.5f} mean {report['mean_cosine']:.5f} "
        f"(bar {MIN_COSINE})"
    )
  if not passed:
    sys.exit("compare_serving_precision: bfloat16 serving misses the bar")


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
