"""The benchmark contestants' processes: `python -m
albert.benchmarks.workers.NAME ARGS`, each building what it times, then
answering in turns (`official.benchmark.turns`).

  serve_loop           the warm-up and the turns protocol, for every worker
  request_mix          the request mix of short texts the `serving` workers
                       share
  saved_model          the raw-text serving SavedModel (`serving`)
  matmul_floor         that model's matrix products alone (`serving`)
  onnx_encoder         our ONNX export on onnxruntime (`serving`)
  torch_albert         transformers' AlbertModel (`serving`)
  encoder_saved_model  the encoder SavedModel on token ids, with or without
                       XLA (`tflite`)
  tflite_interpreter   a TFLite flatbuffer on LiteRT's interpreter
                       (`tflite`)
  token_ids            the token ids the `tflite` workers encode
  embed_saved_model    the SavedModel's `embed` signature on texts
                       (`embedding`)
  embed_onnx           our ONNX export on texts, batched or one text padded
                       (`embedding`)
  embed_sentence_transformers  sentence-transformers' `encode` (`embedding`)

A worker imports the standard library, `serve_loop`, `request_mix`, what it
times and (the TFLite worker) `albert.serving.litert`, the interpreter's
choice, and nothing else of `albert` or `official`: the SavedModel's process
holds TensorFlow and TF-Text only, as a serving process would.
"""
