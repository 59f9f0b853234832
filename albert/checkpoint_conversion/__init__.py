"""Checkpoint conversion: original TF1, Hugging Face, Model Garden checkpoints,
keras-hub presets and TF Hub SavedModels <-> ours.

Modules, one per format (each: in and out, pretrained and fine-tuned):
  original             the original TF1 release's checkpoints (with LAMB's
                       moments and step on request)
  huggingface          transformers model directories
  model_garden         the Model Garden's object-based checkpoints; TF Hub
                       SavedModels (TF2 and TF1 Hub modules), in only
  keras_hub            keras-hub presets (backbone, classifier)
  sentence_transformers  sentence-transformers embedding models (pooling,
                       normalisation, maximum length: embedding.json)
And what they share:
  convert              convert(): the dispatch by format, the one entry
  model_io             our side: load a model directory, build, stage, write;
                       our weight names are albert/modeling/weight_names.py
  name_table           NameTable: name + shape checked moves across a boundary
  original_names       the original TF1 names, the one table
  huggingface_names    the transformers names and config keys, the one table
  model_garden_names   the Model Garden's variable names and object paths
  keras_hub_names      keras-hub's weights-file keys and JSON configs
  saved_model_reader   a SavedModel's variables, Keras metadata and assets,
                       read without loading it
  finetuned_names      fine-tuned models: our names, the heads' TF1 and HF names
  original_checkpoint  name-based (TF1) checkpoint reading and writing
  safetensors_io       transformers model directories (safetensors, .bin)
  hf_tokenizer         tokenizer.json of a SentencePiece model, splitting as
                       ours does
  errors               ConversionError, the one-line user error

Command line: tools/convert_checkpoint.py; docs/checkpoint_conversion.md.
"""
