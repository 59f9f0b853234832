"""Worker: our ONNX export of the encoder on onnxruntime, token ids in.

  python -m albert.benchmarks.workers.onnx_encoder PATH VOCAB_SIZE \
      SEQ_LENGTH BATCH_SIZE

Runs PATH's "pooled_output" on random ids (seed 0) with the CPU execution
provider; info: "onnxruntime", its version.
"""

import sys

import numpy as np

from albert.benchmarks.workers import serve_loop


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
  feeds = {}
  for b in (1, batch):
    ids = rng.integers(5, vocab, (b, seq)).astype(np.int32)
    feeds[b] = {
        "input_word_ids": ids,
        "input_mask": np.ones_like(ids),
        "input_type_ids": np.zeros_like(ids),
    }

  def run(batch_size):
    session.run(["pooled_output"], feeds[batch_size])

  info = {"onnxruntime": onnxruntime.__version__}
  serve_loop.serve_batches(run, info, batch)


if __name__ == "__main__":
  main(sys.argv)
