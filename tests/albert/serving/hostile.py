"""Hostile requests to every raw-text signature of a SavedModel, in a fresh
process: what a serving fleet must answer without falling over.

`check(saved_model)` sends each signature whose inputs are all string [B]
texts (the same batch to each input; not `examples`, serialized tf.Examples,
which a malformed request fails with InvalidArgumentError, a clean refusal):
an empty string, a text far longer than any `seq_length`, bytes that are not
UTF-8, a batch of zero, and the three together. It returns, per signature
and case, "ok" when every output has the batch's size as its first
dimension, else what went wrong (the exception's first line, or the wrong
shapes). A crash of the process fails the call.
"""

import base64
import json
import sys

from tests import helpers

CASES = ("empty", "long", "invalid_utf8", "zero", "mixed")

_SCRIPT = r"""
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401 (the SentencePiece and WordPiece ops)

import base64
texts = {
    case: [base64.b64decode(t) for t in batch]
    for case, batch in json.loads(sys.stdin.read()).items()
}
loaded = tf.saved_model.load(sys.argv[1])
report = {}
for name, fn in sorted(loaded.signatures.items()):
  _, specs = fn.structured_input_signature
  if not specs or "examples" in specs or any(
      s.dtype != tf.string or s.shape.rank != 1 for s in specs.values()
  ):
    continue  # token ids, or serialized tf.Examples: not raw text
  report[name] = {}
  for case, batch in texts.items():
    value = tf.constant(batch, tf.string, shape=[len(batch)])
    try:
      outputs = fn(**{k: value for k in specs})
    except Exception as e:  # a clean refusal, reported
      first = str(e).strip().splitlines()[0]
      report[name][case] = f"{type(e).__name__}: {first}"
      continue
    wrong = {
        k: v.shape.as_list() for k, v in outputs.items()
        if v.shape.rank == 0 or v.shape[0] != len(batch)
    }
    report[name][case] = "ok" if not wrong else f"shapes {wrong}"
print(json.dumps(report))
"""


def batches() -> dict:
  """{case: [bytes]}: the requests of every case."""
  texts = {
      "empty": [b""],
      "long": [("the list returns a value " * 4000).encode()],
      "invalid_utf8": [b"caf\xc3 \xff\xfe na\xefve \x80[MASK] end"],
      "zero": [],
  }
  texts["mixed"] = texts["empty"] + texts["long"] + texts["invalid_utf8"]
  return texts


def check(saved_model) -> dict:
  """{signature: {case: "ok" or what went wrong}} (see the module doc)."""
  encoded = {
      case: [base64.b64encode(t).decode() for t in batch]
      for case, batch in batches().items()
  }
  run = helpers.run(
      [sys.executable, "-c", _SCRIPT, str(saved_model)],
      input=json.dumps(encoded),
      timeout=600,
  )
  assert run.returncode == 0, run.stderr[-3000:]
  return json.loads(run.stdout.strip().splitlines()[-1])


def assert_answers_everything(saved_model, signatures) -> None:
  """Every one of `signatures` (raw text) answers every case."""
  report = check(saved_model)
  assert sorted(report) == sorted(signatures), report
  for name, cases in report.items():
    assert cases == {case: "ok" for case in CASES}, (name, cases)
