"""Generic Keras building blocks: activations, precision policies."""
