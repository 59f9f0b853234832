"""Checkpoint conversion: original TF1, Hugging Face, Model Garden checkpoints,
keras-hub presets and TF Hub SavedModels <-> ours.

Modules:
  converter            the four conversions of pretrained models (from/to
                       original, from/to HF); our weight names are
                       albert/modeling/weight_names.py
  finetuned_converter  the same for fine-tuned models (encoder and head)
  model_garden         from/to the Model Garden's object-based checkpoints,
                       from TF Hub SavedModels (TF2 and TF1 Hub modules)
  keras_hub_preset     from/to keras-hub presets (backbone, classifier)
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
  errors               ConversionError, the one-line user error

Command line: tools/convert_checkpoint.py; docs/checkpoint_conversion.md.
"""
