"""Checkpoint conversion: original TF1 and Hugging Face checkpoints <-> ours.

Modules:
  converter           the four conversions of pretrained models (from/to
                      original, from/to HF); our weight names are
                      albert/modeling/weight_names.py
  finetuned_converter the same for fine-tuned models (encoder and head)
  name_table          NameTable: name + shape checked moves across a boundary
  original_names      the original TF1 names, the one table
  huggingface_names   the transformers names and config keys, the one table
  finetuned_names     fine-tuned models: our names, the heads' TF1 and HF names
  original_checkpoint name-based (TF1) checkpoint reading and writing
  safetensors_io      transformers model directories (safetensors, .bin)
  errors              ConversionError, the one-line user error

Command line: tools/convert_checkpoint.py; docs/checkpoint_conversion.md.
"""
