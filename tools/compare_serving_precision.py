"""Runs albert/cli/compare_serving_precision.py."""

from albert.cli import compare_serving_precision

if __name__ == "__main__":
  compare_serving_precision.run()
