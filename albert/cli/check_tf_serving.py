r"""Do our exports run on TF Serving's TensorFlow? Checked without a server.

  python tools/check_tf_serving.py --spm_model_file=demo_out/spm.model \
      [--side_python=/tmp/tfs/bin/python] [--json]

Builds every SavedModel we export (run_export's encoder, preprocessing and
serving models; the fine-tuned classification, regression, multi-label,
token classification, SQuAD v1.1 / v2.0, RACE and sentence-embedding heads)
on tiny random models, and compares each saved graph's ops and attributes
with the record of the newest TF Serving release's TensorFlow and TF-Text
(tests/testdata/tf_serving/ops.json, made by
tests/testdata/make_tf_serving_ops.py). With --side_python, the Python of an
environment with that TensorFlow and TF-Text, it also loads each SavedModel
there, sends the same requests, and compares the answers with ours.
Exits with status 1 when an op is unknown there or an answer differs by more
than 1e-4.
"""

import json
import os
import sys
import tempfile

from absl import flags

from albert import cli
from albert.finetuning import serving_check
from albert.serving import exporter
from albert.modeling.config import AlbertConfig
from albert.serving.wordpiece_preprocessor import make_preprocessor
from official.errors import InputError
from official.io import files

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
SPM = flags.DEFINE_string(
    "spm_model_file", None, "SentencePiece model of the tiny models."
)
SIDE = flags.DEFINE_string(
    "side_python",
    None,
    "Python of an environment with TF Serving's TensorFlow and TF-Text: "
    "load every export there and compare its answers with ours.",
)
RECORD = flags.DEFINE_string(
    "record",
    os.path.join(_REPO, "tests/testdata/tf_serving/ops.json"),
    "What the server's TensorFlow knows (make_tf_serving_ops.py's output).",
)
SEQ = flags.DEFINE_integer("seq_length", 40, "The exports' maximum length.")
JSON = flags.DEFINE_bool("json", False, "Print one JSON object.")
TOLERANCE = 1e-4


def main(argv):
  cli.unexpected_arguments(argv)
  cli.require_flags("spm_model_file")
  for flag, path in ((SPM, SPM.value), (RECORD, RECORD.value)):
    if not files.isfile(path):
      raise InputError(f"--{flag.name}={path} does not exist")
  if SIDE.value and not os.access(SIDE.value, os.X_OK):
    raise InputError(
        f"--side_python={SIDE.value} is not an executable Python: give the "
        "side environment's (tests/testdata/make_tf_serving_ops.py says how "
        "to make it)"
    )
  config = AlbertConfig(
      vocab_size=make_preprocessor(spm_model_file=SPM.value).vocab_size,
      embedding_size=16,
      hidden_size=32,
      num_layers=2,
      num_heads=4,
      intermediate_size=64,
      max_position_embeddings=64,
  )
  modules = serving_check.random_modules(
      config,
      lambda: [
          make_preprocessor(spm_model_file=SPM.value, seq_length=SEQ.value)
      ],
  )
  # local-only: the check's scratch SavedModels, removed after.
  with tempfile.TemporaryDirectory() as work:
    # run_export's encoder and preprocessing SavedModels, as it writes them.
    exported = os.path.join(work, "export")
    exporter.export(
        modules["pretrained"][0].model,
        spm_model_file=SPM.value,
        export_dir=exported,
        seq_length=SEQ.value,
    )
    report = serving_check.check(
        {kind: pair[0] for kind, pair in modules.items()},
        RECORD.value,
        work,
        side_python=SIDE.value,
        side_script=os.path.join(
            _REPO, "tests/testdata/make_tf_serving_ops.py"
        ),
        saved={
            name: os.path.join(exported, name)
            for name in ("encoder", "preprocessing")
        },
    )
  side = report.pop("side", None)
  failed = [
      kind
      for kind, entry in report.items()
      if entry["ops"] or entry.get("difference", 0.0) > TOLERANCE
  ]
  if JSON.value:
    print(json.dumps({"exports": report, "side": side}, sort_keys=True))
  else:
    for kind, entry in sorted(report.items()):
      ops = "; ".join(entry["ops"]) or "every op and attribute known"
      answers = (
          f", answers within {entry['difference']:.1e} of ours "
          f"({', '.join(entry['signatures'])})"
          if "difference" in entry
          else ""
      )
      print(f"{kind}: {ops}{answers}")
    if side:
      print(
          f"side environment: TensorFlow {side['tensorflow']}, TF-Text "
          f"{side['tensorflow_text']}"
      )
  if failed:
    print(
        f"check_tf_serving: error: {', '.join(failed)} would not run as "
        "served here (see above)",
        file=sys.stderr,
    )
    sys.exit(1)


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
