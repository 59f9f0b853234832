"""Runs albert/cli/train_wordpiece.py."""

from albert.cli import train_wordpiece

if __name__ == "__main__":
  train_wordpiece.run()
