"""Optimizers (LAMB, AdamW) and learning-rate schedules."""
