"""Worker: a TFLite flatbuffer of the encoder on LiteRT's interpreter
(`albert.serving.litert`: TensorFlow's where LiteRT has no wheel).

  python -m albert.benchmarks.workers.tflite_interpreter PATH SEQ_LENGTH \
      VOCAB_SIZE NUM_THREADS

Runs PATH's "serving_default" signature on `token_ids.encoder_feed` with
NUM_THREADS interpreter threads; info: "threads", "interpreter".
"""

import sys

from albert.benchmarks.workers import serve_loop
from albert.serving import litert
from albert.benchmarks.workers import token_ids


def main(argv):
  path, seq, vocab, threads = argv[1], int(argv[2]), int(argv[3]), int(argv[4])
  feed = token_ids.encoder_feed(seq, vocab)
  cls, which = litert.interpreter_class()
  interpreter = cls(model_path=path, num_threads=threads)
  runner = interpreter.get_signature_runner("serving_default")

  def run():
    outputs = runner(**feed)
    outputs["pooled_output"].sum()
    outputs["sequence_output"].sum()

  def pooled():
    return runner(**feed)["pooled_output"][0]

  serve_loop.serve_calls(
      run, pooled, {"threads": threads, "interpreter": which}
  )


if __name__ == "__main__":
  main(sys.argv)
