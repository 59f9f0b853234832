"""Runs albert/cli/train_sentencepiece.py."""

from albert.cli import train_sentencepiece

if __name__ == "__main__":
  train_sentencepiece.run()
