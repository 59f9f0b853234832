"""Worker: an ONNX embedding model on onnxruntime, texts in.

  python -m albert.benchmarks.workers.embed_onnx PATH TOKENIZER_DIR TEXTS \
      BATCH_SIZE MAX_LENGTH MODE

PATH is our ONNX export with its `embedding` output; TOKENIZER_DIR the
sentence-transformers directory, whose tokenizer (transformers' fast one)
tokenizes inside the timed call, as pymilvus and GPTCache do. MODE:
  batched     BATCH_SIZE texts per call in order of length, each batch
              padded to its longest text
  one_padded  one text per call padded to MAX_LENGTH: how pymilvus'
              default embedder and GPTCache call their ONNX ALBERT
info: "onnxruntime", the first texts' vectors ("sample").
"""

import json
import sys

from albert.benchmarks.workers import serve_loop


def main(argv):
  import numpy as np  # pylint: disable=import-outside-toplevel
  import onnxruntime  # pylint: disable=import-outside-toplevel
  import transformers  # pylint: disable=import-outside-toplevel

  path, tokenizer_dir, texts_file = argv[1:4]
  batch, max_length, mode = int(argv[4]), int(argv[5]), argv[6]
  with open(texts_file, encoding="utf-8") as f:
    texts = json.load(f)
  tokenizer = transformers.AutoTokenizer.from_pretrained(tokenizer_dir)
  session = onnxruntime.InferenceSession(
      path, providers=["CPUExecutionProvider"]
  )

  def vectors(chunk, padding):
    encoded = tokenizer(
        chunk,
        padding=padding,
        truncation=True,
        max_length=max_length,
        return_tensors="np",
    )
    ids = encoded["input_ids"].astype(np.int32)
    feeds = {
        "input_word_ids": ids,
        "input_mask": encoded["attention_mask"].astype(np.int32),
        "input_type_ids": np.zeros_like(ids),
    }
    return session.run(["embedding"], feeds)[0]

  if mode == "batched":
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    batches = [
        [texts[i] for i in order[s : s + batch]]
        for s in range(0, len(order), batch)
    ]

    def run():
      for b in batches:
        vectors(b, "longest")

  elif mode == "one_padded":

    def run():
      for text in texts:
        vectors([text], "max_length")

  else:
    raise SystemExit(f"mode {mode!r} is not batched or one_padded")

  def sample():
    return np.asarray(vectors(texts[:8], "longest"))

  serve_loop.serve_calls(
      run, sample, {"onnxruntime": onnxruntime.__version__}, warmups=2
  )


if __name__ == "__main__":
  main(sys.argv)
