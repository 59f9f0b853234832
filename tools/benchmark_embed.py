"""Runs albert/cli/benchmark_embed.py."""

from albert.cli import benchmark_embed

if __name__ == "__main__":
  benchmark_embed.run()
