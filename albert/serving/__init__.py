"""SavedModels of a trained ALBERT.

Modules:
  preprocessor          AlbertPreprocessor: raw strings -> encoder inputs
                        (TF ops)
  hub_encoder_module    HubEncoderModule: the TF Hub-style encoder on token ids
  text_serving_module   TextServingModule: raw text end to end (fill_mask, ...)
  exporter              export(): the three SavedModels, written atomically

Command line: `python -m albert.run_export`.
"""
