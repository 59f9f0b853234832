"""Checkpoint conversion: original TF1 and Hugging Face checkpoints <-> ours.

Modules:
  converter           the four conversions (from/to original, from/to HF),
                      for pretrained and fine-tuned models (our weight names:
                      albert/modeling/weight_names.py)
  name_table          NameTable: name + shape checked moves across a boundary
  original_names      the original TF1 names, the one table
  huggingface_names   the transformers names and config keys, the one table
  finetuned_names     fine-tuned models: our names, the heads' TF1 and HF names
  original_checkpoint name-based (TF1) checkpoint reading and writing
  safetensors_io      transformers model directories (safetensors, .bin)
  errors              ConversionError, the one-line user error

Command line: tools/convert_checkpoint.py; docs/checkpoint_conversion.md.
"""
