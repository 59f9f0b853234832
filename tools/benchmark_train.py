"""Runs albert/cli/benchmark_train.py."""

from albert.cli import benchmark_train

if __name__ == "__main__":
  benchmark_train.run()
