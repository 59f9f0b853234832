"""Benchmark helpers: processes that take turns, and what CPU they ran on."""
