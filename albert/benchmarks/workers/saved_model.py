"""Worker: the raw-text serving SavedModel, tokenisation included.

  python -m albert.benchmarks.workers.saved_model PATH SEQ_LENGTH BATCH_SIZE

Calls PATH's "serving_default" on an English text of about SEQ_LENGTH
tokens; info: "tokens", the tokens of one text after truncation. The
process imports TensorFlow and TF-Text only, as a serving process would.
"""

import sys

import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the SentencePiece ops)

from albert.benchmarks.workers import serve_loop


def main(argv):
  path, seq, batch = argv[1], int(argv[2]), int(argv[3])
  serve = tf.saved_model.load(path).signatures["serving_default"]
  text = " ".join(["the quick brown fox jumps over the lazy dog"] * (seq // 4))
  texts = {1: tf.constant([text]), batch: tf.constant([text] * batch)}

  def run(batch_size):
    serve(text=texts[batch_size])["pooled_output"].numpy()

  info = {"tokens": int(serve(text=texts[1])["input_mask"].numpy().sum())}
  serve_loop.serve_batches(run, info, batch)


if __name__ == "__main__":
  main(sys.argv)
