"""Runs albert/cli/fetch.py."""

from albert.cli import fetch

if __name__ == "__main__":
  fetch.run()
