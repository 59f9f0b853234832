"""Pretraining data for ALBERT: SentencePiece vocabulary, MLM + SOP TFRecords.

Modules (each named for its main function or class):
  tokenization      text normalisation, SentencePiece encoding, word starts.
  corpus_reader     byte-range blocks of the input files, read as documents.
  instances         segment pairs ([CLS] A [SEP] B [SEP]) for SOP / NSP / none.
  masking           whole-word n-gram masking (paper section 4.1, Table 5).
  example_proto     `tf.train.Example` wire bytes without importing TensorFlow.
  tfrecord_writer   TFRecord framing (crc32c), optional gzip.
  block_generator   one block of the corpus -> serialized examples.
  data_config       the flags that decide the output, validated.
  pipeline          sharding, worker processes, resume, manifest.
  beam_pipeline     the same generation on Apache Beam.

Nothing here imports TensorFlow, so worker processes stay small.
"""
