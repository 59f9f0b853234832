"""Strategies: the one factory and the one `strategy.run` (strategy), and
prediction on every replica (replicated)."""
