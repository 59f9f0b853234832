"""Runs albert/cli/query_saved_model.py."""

from albert.cli import query_saved_model

if __name__ == "__main__":
  query_saved_model.run()
