"""Runs albert/cli/create_pretraining_data.py."""

from albert.cli import create_pretraining_data

if __name__ == "__main__":
  create_pretraining_data.run()
