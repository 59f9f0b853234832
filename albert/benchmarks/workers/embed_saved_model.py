"""Worker: the serving SavedModel's `embed` signature on raw texts.

  python -m albert.benchmarks.workers.embed_saved_model PATH TEXTS BATCH_SIZE

TEXTS is a JSON list of strings. One timed call embeds all of them in
batches of BATCH_SIZE taken in order of length (each padded, in the graph,
to its longest text), as albert-embed does; info: the first texts' vectors
("sample").
"""

import json
import sys

from albert.benchmarks.workers import serve_loop


def main(argv):
  import numpy as np  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tensorflow_text  # noqa: F401 pylint: disable=import-outside-toplevel

  path, texts_file, batch = argv[1], argv[2], int(argv[3])
  with open(texts_file, encoding="utf-8") as f:
    texts = json.load(f)
  embed = tf.saved_model.load(path).signatures["embed"]
  order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
  batches = [
      tf.constant([texts[i] for i in order[s : s + batch]])
      for s in range(0, len(order), batch)
  ]

  def run():
    for b in batches:
      embed(text=b)["embedding"].numpy()

  def sample():
    return np.asarray(embed(text=tf.constant(texts[:8]))["embedding"])

  serve_loop.serve_calls(run, sample, {"tensorflow": tf.__version__}, warmups=2)


if __name__ == "__main__":
  main(sys.argv)
