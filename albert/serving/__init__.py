"""SavedModels, TFLite flatbuffers and ONNX models of a trained ALBERT.

Modules:
  preprocessor              AlbertPreprocessor: raw strings -> encoder inputs
                            (TF ops)
  packing                   combine_segments: [CLS] A [SEP] B [SEP] from the
                            row splits
  hub_preprocessing_module  HubPreprocessingModule: TF Hub's `tokenize` and
                            `bert_pack_inputs`
  hub_encoder_module        HubEncoderModule: the TF Hub-style encoder on token
                            ids
  embedding_serving         EmbeddingServingModule: raw text -> sentence
                            embeddings (embed, similarity)
  text_serving_module       TextServingModule: raw text end to end (fill_mask,
                            embed, ...)
  exporter                  export(): the three SavedModels, written atomically
  tflite_export             TFLite flatbuffers (float32, dynamic-range int8)
  litert                    the TFLite interpreter: LiteRT's, else
                            TensorFlow's
  onnx_export               ONNX models written from the weights (encoder,
                            classifiers), float32 or int8, for onnxruntime
  wordpiece_preprocessor    WordPiecePreprocessor: raw strings -> encoder
                            inputs with a vocab.txt (TF ops)
  embedding                 Embedder: texts -> one vector each, as a model
                            directory's embedding settings say

Command line: `python -m albert.run_export`, `python -m albert.export_tflite`.
"""
