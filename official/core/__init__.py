"""Task abstraction and the generic training loop."""
