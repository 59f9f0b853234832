"""Worker: our ONNX export of the encoder on onnxruntime, token ids in.

  python -m albert.benchmarks.workers.onnx_encoder PATH VOCAB_SIZE \
      SEQ_LENGTH BATCH_SIZE [MIX_JSON]

Runs PATH's "pooled_output" on random ids (seed 0) with the CPU execution
provider, SEQ_LENGTH of them per example; with MIX_JSON
(`request_mix.write`'s file), each request takes the next 1 or BATCH_SIZE
texts' lengths and pads the batch to the longest (as a client batching by
request would). Info: "onnxruntime", its version.
"""

import sys

import numpy as np

from albert.benchmarks.workers import request_mix
from albert.benchmarks.workers import serve_loop


def _feed(rng, vocab, lengths):
  longest = max(lengths)
  ids = rng.integers(5, vocab, (len(lengths), longest)).astype(np.int32)
  mask = (np.arange(longest)[None, :] < np.array(lengths)[:, None]).astype(
      np.int32
  )
  return {
      "input_word_ids": ids,
      "input_mask": mask,
      "input_type_ids": np.zeros_like(ids),
  }


def main(argv):
  # Imported here: onnxruntime is an optional extra ([onnx]); the module
  # imports without it.
  import onnxruntime  # pylint: disable=import-outside-toplevel

  path = argv[1]
  vocab, seq, batch = map(int, argv[2:5])
  session = onnxruntime.InferenceSession(
      path, providers=["CPUExecutionProvider"]
  )
  rng = np.random.default_rng(0)
  mix = None
  if len(argv) > 5:
    mix = request_mix.Mix(argv[5])
    feed = lambda size: _feed(rng, vocab, mix.lengths(size))
  else:
    fixed = {b: _feed(rng, vocab, [seq] * b) for b in (1, batch)}
    feed = lambda size: fixed[size]

  def run(batch_size):
    session.run(["pooled_output"], feed(batch_size))

  info = {"onnxruntime": onnxruntime.__version__}
  serve_loop.serve_batches(run, info, batch, len(mix) if mix else 3)


if __name__ == "__main__":
  main(sys.argv)
