"""RACE multiple choice: data, task and per-level accuracy."""
