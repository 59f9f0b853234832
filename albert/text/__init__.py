"""Text handling shared by data generation, fine-tuning and serving.

  tokenization   the original's normalisation, SentencePieceTokenizer, word
                 starts
"""
