"""ALBERT (Lan et al., ICLR 2020) for TensorFlow 2 / Keras 2."""
