"""Generic Keras building blocks (activations)."""
