"""Worker: sentence-transformers' `encode` of the same model (PyTorch).

  python -m albert.benchmarks.workers.embed_sentence_transformers DIR TEXTS \
      BATCH_SIZE COMPILE AUTOCAST

DIR is a sentence-transformers directory, TEXTS a JSON list of strings. One
timed call is `encode(texts, batch_size=BATCH_SIZE)` (which sorts by length
and pads each batch to its longest text). COMPILE "1" wraps the transformer
in `torch.compile(dynamic=True)`; AUTOCAST is a torch dtype name run under
CPU autocast, or "none". info: "torch", "threads", the first texts'
vectors ("sample").
"""

import contextlib
import json
import sys

from albert.benchmarks.workers import serve_loop


def main(argv):
  # Imported here: torch and sentence-transformers are test-only peers,
  # which no module of the package imports (tests/test_packaging.py).
  import numpy as np  # pylint: disable=import-outside-toplevel
  import sentence_transformers  # pylint: disable=import-outside-toplevel
  import torch  # pylint: disable=import-outside-toplevel

  directory, texts_file, batch = argv[1], argv[2], int(argv[3])
  compiled, autocast = argv[4] == "1", argv[5]
  with open(texts_file, encoding="utf-8") as f:
    texts = json.load(f)
  model = sentence_transformers.SentenceTransformer(directory, device="cpu")
  model.eval()
  if compiled:
    model[0].auto_model = torch.compile(model[0].auto_model, dynamic=True)

  def scope():
    if autocast == "none":
      return contextlib.nullcontext()
    return torch.autocast("cpu", dtype=getattr(torch, autocast))

  def encode(chunk):
    with torch.inference_mode(), scope():
      return model.encode(
          chunk,
          batch_size=batch,
          convert_to_numpy=True,
          show_progress_bar=False,
      )

  info = {
      "torch": torch.__version__,
      "threads": torch.get_num_threads(),
      "compile": compiled,
      "autocast": autocast,
  }
  serve_loop.serve_calls(
      lambda: encode(texts),
      lambda: np.asarray(encode(texts[:8]), np.float32),
      info,
      warmups=2,  # the first compiles every shape
  )


if __name__ == "__main__":
  main(sys.argv)
