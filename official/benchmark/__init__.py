"""Benchmark helpers: processes that take turns, what CPU they ran on, and
which optional peers are installed."""
