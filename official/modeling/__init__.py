"""Generic Keras building blocks.

  activations   gelu (tanh approximation, hand-written gradient)
  precision     mixed-precision policies and their compute dtypes
  fusion        fused kernels for the training step (GELU, LayerNorm)
  no_autograph  a layer's call traced as written, not rewritten by AutoGraph
  recompute     activation recomputation, chosen per training run
  tokenwise     Dense over a sequence's last axis as one 2-D product
"""
