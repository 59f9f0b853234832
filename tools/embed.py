"""Runs albert/cli/embed.py."""

from albert.cli import embed

if __name__ == "__main__":
  embed.run()
