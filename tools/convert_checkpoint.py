"""Runs albert/cli/convert_checkpoint.py."""

from albert.cli import convert_checkpoint

if __name__ == "__main__":
  convert_checkpoint.run()
