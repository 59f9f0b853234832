"""Runs albert/cli/benchmark_data.py."""

from albert.cli import benchmark_data

if __name__ == "__main__":
  benchmark_data.run()
