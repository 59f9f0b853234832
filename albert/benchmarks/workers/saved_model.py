"""Worker: the raw-text serving SavedModel, tokenisation included.

  python -m albert.benchmarks.workers.saved_model PATH SEQ_LENGTH BATCH_SIZE \
      [MIX_JSON]

Calls PATH's "serving_default" on an English text of about SEQ_LENGTH
tokens; with MIX_JSON (`request_mix.write`'s file), on its texts in turn,
each request taking the next 1 or BATCH_SIZE of them. Info: "tokens", the
tokens of one text after truncation (the mix's mean). The process imports
TensorFlow and TF-Text only, as a serving process would.
"""

import sys

import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the SentencePiece ops)

from albert.benchmarks.workers import request_mix
from albert.benchmarks.workers import serve_loop


def main(argv):
  path, seq, batch = argv[1], int(argv[2]), int(argv[3])
  serve = tf.saved_model.load(path).signatures["serving_default"]
  mix = None
  if len(argv) > 4:
    mix = request_mix.Mix(argv[4])
    texts = lambda size: tf.constant(mix.texts(size))
    sample = request_mix.Mix(argv[4]).texts(batch)  # not from `mix`'s turn
  else:
    text = " ".join(
        ["the quick brown fox jumps over the lazy dog"] * (seq // 4)
    )
    fixed = {1: tf.constant([text]), batch: tf.constant([text] * batch)}
    texts = lambda size: fixed[size]
    sample = fixed[batch]

  def run(batch_size):
    serve(text=texts(batch_size))["pooled_output"].numpy()

  mask = serve(text=tf.constant(sample))["input_mask"].numpy()
  info = {"tokens": float(mask.sum() / len(mask))}
  serve_loop.serve_batches(run, info, batch, len(mix) if mix else 3)


if __name__ == "__main__":
  main(sys.argv)
