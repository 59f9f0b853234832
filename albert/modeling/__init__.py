"""The ALBERT network: config, layers, encoder, pretraining heads.

Modules (each named for its main class):
  config                    AlbertConfig, the one description of a model
  embedding                 FactorizedEmbedding: V x E table, then E -> H
  attention                 AttentionBlock: self-attention + LayerNorm
  feed_forward              FeedForwardBlock: H -> FFN -> H + LayerNorm
  shared_transformer_block  SharedTransformerBlock: the layers and their sharing
  encoder                   AlbertEncoder: ids -> sequence and pooled output
  encoder_with_heads        EncoderWithHeads: base of every model with heads
  masked_lm_head            MaskedLMHead: tied-embedding masked-LM logits
  sentence_order_head       SentenceOrderHead: the SOP logits
  pretrainer                AlbertPretrainer: encoder + both pretraining heads
  flops                     analytic FLOP counts, for benchmarks
  parameter_counts          parameter counts per component

Nothing here knows about distribution, data files or serving.
"""
