"""Pretraining data for ALBERT: SentencePiece vocabulary, MLM + SOP TFRecords.

Modules (each named for its main function or class):
  corpus_reader          byte-range blocks of the input files, as documents.
  instances              pairs [CLS] A [SEP] B [SEP] for SOP / NSP / none.
  masking                whole-word n-gram masking (paper section 4.1).
  example_proto          tf.train.Example wire bytes without TensorFlow.
  block_generator        one block of the corpus -> serialized examples.
  documents_format       --output_format=documents: each document once, and
                         the vocabulary tables its reader needs.
  dynamic_masking        pairs and masks of documents as the trainer reads
                         them (the reader: albert.pretraining.documents_data).
  data_config            the options that decide the output, validated.
  shards                 input globs, shard names, block -> shard.
  staging                temporary names, resume, commit.
  pipeline               the run as a whole: plan, phases, resume, commit.
  worker_pool            the worker processes and what each unit runs.
  document_pool          the random-document pool (NSP, random_document).
  global_shuffle         every example to a random shard and place.
  manifest               manifest.json.
  progress_reporter      counts, rate and ETA on the log.
  beam_pipeline          the same generation on Apache Beam.
  sentencepiece_trainer  the vocabulary.
  wordpiece_trainer      a WordPiece vocab.txt.
  sample_corpus          a corpus from the standard library's docstrings.
  original_baseline      the original algorithm, for benchmarks only.

Text normalisation and SentencePiece are in albert/text/, TFRecord framing
in official/io/. Nothing here imports TensorFlow at module level, so workers
stay small.
"""
