"""Fine-tuning (paper sections 4.2-4.3): the library `python -m
albert.run_finetuning` runs, and its tasks, one package per family.

  training                 run(): train_and_eval, eval, predict, export
  exporting                export(): the serving SavedModel or ONNX model
  embedders                open_embedder(): a trained embedder, an export or
                           an imported model, by path
  serving_check            every raw-text serving module, checked against
                           another TensorFlow (TF Serving's)

Shared by every family:
  finetune_task            FinetuneTask: tokenizer, cached features, prediction
  task_model               its encoder's config, warm start, a frozen encoder
  feature_cache            converted training features, kept between runs
  task_state               TaskState: what MODEL_DIR knows besides the weights
                           (labels.json, eval_results.json), for use_state
  classification_task      ClassificationTask: cross-entropy or squared error
  sentence_classification  SentenceClassificationTask (the original
                           run_classifier.py features and serving), GLUE's and
                           own data's
  classification_metrics   accuracy, F1, macro-F1, MCC, Pearson, Spearman,
                           per-class scores and the confusion matrix
  class_weights            class and positive weights, the focal loss
  long_text                texts longer than the model: windows and their
                           aggregation, in Python and in the graph
  multilabel_metrics       multi-label metrics and per-label thresholds
  packing                  a fine-tuning example's segments -> encoder inputs
  text_example             TextExample, MultipleChoiceExample

Families (each: data readers, the task, its metrics and serving):
  glue/      GlueTask: the nine GLUE tasks and AX; submission files
  squad/     SquadTask: SQuAD v1.1 and v2.0, character-exact answers
  race/      RaceTask: multiple choice
  own_data/  CSV / TSV / JSON Lines classification and regression, sentence
             embedders, CoNLL token classification, labels files, the sample
             data sets

The networks and heads the tasks train are in `albert/modeling/`.
"""
