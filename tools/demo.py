"""Runs albert/cli/demo.py."""

from albert.cli import demo

if __name__ == "__main__":
  demo.run()
