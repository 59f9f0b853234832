r"""Records what the newest TF Serving release's TensorFlow and TF-Text know.

TF Serving 2.20 embeds TensorFlow 2.20 and TF-Text 2.20.0 (its
`tensorflow_serving/workspace.bzl`) and links every TF-Text op
(`tensorflow_text:ops_lib`); we export with TensorFlow 2.21. In a side
environment with TensorFlow 2.20 and TF-Text 2.20 (PyPI's nearest is 2.20.1),
this script writes tests/testdata/tf_serving/ops.json: every registered op
with its attribute names, and the ops with a CPU kernel
(`official.core.graph_ops.record`). tests/albert/serving/test_serving_modules.py
compares every export's ops with it.

With --answer=REQUESTS.json --out=ANSWERS.json it instead loads each
SavedModel the requests name in this environment and writes what their
signatures answer (`tools/check_tf_serving.py` compares that with our
TensorFlow's answers).

Not part of the test run: run it by hand (TensorFlow 2.20 cannot share
the development environment):

  python3.11 -m venv /tmp/tfs
  /tmp/tfs/bin/pip install tensorflow==2.20.0 tensorflow-text==2.20.1
  /tmp/tfs/bin/python tests/testdata/make_tf_serving_ops.py \
      --out=tests/testdata/tf_serving/ops.json
"""

import argparse
import json
import os
import sys

import numpy as np
import tensorflow as tf
import tensorflow_text

sys.path.insert(
    0, os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
)
# pylint: disable-next=wrong-import-position
from official.core import graph_ops  # noqa: E402  (TensorFlow only)


def _record(out: str) -> None:
  record = graph_ops.record()
  record["tensorflow_text"] = tensorflow_text.__version__
  os.makedirs(os.path.dirname(out), exist_ok=True)
  with open(out, "w", encoding="utf-8") as f:
    json.dump(record, f, indent=0, sort_keys=True)
    f.write("\n")
  print(
      f"{out}: TensorFlow {record['tensorflow']}, TF-Text "
      f"{record['tensorflow_text']}: {len(record['ops'])} ops, "
      f"{len(record['cpu_kernels'])} with a CPU kernel"
  )


def _answer(requests_path: str, out: str) -> None:
  """REQUESTS.json: [{"saved_model", "signature", "inputs": {name: [...]},
  "dtypes": {name: dtype}}]; ANSWERS.json: one {output: list} per request."""
  with open(requests_path, encoding="utf-8") as f:
    requests = json.load(f)
  loaded, answers = {}, []
  for r in requests:
    path = r["saved_model"]
    if path not in loaded:
      loaded[path] = tf.saved_model.load(path)
    fn = loaded[path].signatures[r["signature"]]
    inputs = {
        name: tf.constant(
            np.array(value, dtype=object if r["dtypes"][name] == "string"
                     else r["dtypes"][name]),
            dtype=r["dtypes"][name],
        )
        for name, value in r["inputs"].items()
    }
    outputs = fn(**inputs)
    answers.append({
        name: (
            value.numpy().astype(str).tolist()
            if value.dtype == tf.string
            else value.numpy().tolist()
        )
        for name, value in outputs.items()
    })
  with open(out, "w", encoding="utf-8") as f:
    json.dump(
        {
            "tensorflow": tf.__version__,
            "tensorflow_text": tensorflow_text.__version__,
            "answers": answers,
        },
        f,
    )


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--out", required=True)
  parser.add_argument("--answer", help="REQUESTS.json: answer them instead")
  args = parser.parse_args()
  if args.answer:
    _answer(args.answer, args.out)
  else:
    _record(args.out)


if __name__ == "__main__":
  main()
