"""Generic pieces of the training step."""
