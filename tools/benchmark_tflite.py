"""Runs albert/cli/benchmark_tflite.py."""

from albert.cli import benchmark_tflite

if __name__ == "__main__":
  benchmark_tflite.run()
