"""Text handling shared by data generation, fine-tuning and serving.

  tokenizers     one interface over the two (load, TokenizerFile, choose)
  tokenization   the original's normalisation, SentencePieceTokenizer, word
                 starts
  wordpiece      WordPieceTokenizer: the original's FullTokenizer of a vocab.txt
"""
