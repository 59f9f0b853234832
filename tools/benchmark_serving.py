"""Runs albert/cli/benchmark_serving.py."""

from albert.cli import benchmark_serving

if __name__ == "__main__":
  benchmark_serving.run()
