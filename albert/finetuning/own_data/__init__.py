"""Fine-tuning on a user's own files.

  reader                CSV / TSV / JSON Lines rows and split files
  text_classification   TextClassificationTask, TextRegressionTask
  text_multilabel       TextMultiLabelTask: any number of labels per text
  sentence_embedding    SentenceEmbeddingTask: an embedder from pairs
  conll                 CoNLL-style tagged sentences
  token_classification  TokenClassificationTask
  token_serving         its raw-text serving module (sentences or windows)
  entity_metrics        entity-level precision, recall and F1
  sample_data           small labelled sets and sentence pairs to try the
                        commands on
"""
