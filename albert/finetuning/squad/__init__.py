"""SQuAD v1.1 and v2.0: data, features (doc-stride windows), task,
postprocessing (n-best spans), metrics and the raw-text serving module."""
