"""Worker: the encoder SavedModel on token ids, the `tflite` baseline.

  python -m albert.benchmarks.workers.encoder_saved_model PATH SEQ_LENGTH \
      VOCAB_SIZE MODE

Calls PATH (a `HubEncoderModule`) on `token_ids.encoder_feed` for both
outputs; MODE "xla" compiles the call with XLA, "tf" runs TensorFlow's
kernels. info: "xla", "threads".
"""

import sys

import tensorflow as tf

from albert.benchmarks.workers import serve_loop
from albert.benchmarks.workers import token_ids


def main(argv):
  path, seq, vocab, mode = argv[1], int(argv[2]), int(argv[3]), argv[4]
  feed = token_ids.encoder_feed(seq, vocab)
  encoder = tf.saved_model.load(path)
  inputs = {k: tf.constant(v) for k, v in feed.items()}

  def call(inputs):
    outputs = encoder(inputs, training=False)
    return outputs["pooled_output"], outputs["sequence_output"]

  if mode == "xla":
    call = tf.function(call, jit_compile=True, autograph=False)

  def run():
    for t in call(inputs):
      t.numpy()

  def pooled():
    return call(inputs)[0].numpy()[0]

  info = {"xla": mode == "xla", "threads": "TensorFlow's default"}
  serve_loop.serve_calls(run, pooled, info)


if __name__ == "__main__":
  main(sys.argv)
