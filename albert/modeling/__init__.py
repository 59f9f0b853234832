"""Every ALBERT network: config, layers, encoder, pretraining and fine-tuning
heads.

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
  classifier                AlbertClassifier: pooled output -> classes / score
  multiple_choice           AlbertMultipleChoice: one score per option (RACE)
  token_classifier          AlbertTokenClassifier: per-token tag logits
  squad_heads               SpanHead (v1.1), ConditionalSpanHead (v2.0)
  squad                     AlbertSquadModel: encoder + span head
  pooling                   SentencePooling: token vectors -> one per text
  sentence_embedder         AlbertSentenceEmbedder: encoder + pooling
  weight_names              our name of every weight (converters, warm starts)
  flops                     analytic FLOP counts, for benchmarks
  parameter_counts          parameter counts per component

Fine-tuned models name their head in `head_kind`. Nothing here knows about
distribution, data files or serving.
"""
