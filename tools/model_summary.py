"""Runs albert/cli/model_summary.py."""

from albert.cli import model_summary

if __name__ == "__main__":
  model_summary.run()
