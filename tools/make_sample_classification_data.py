"""Runs albert/cli/make_sample_classification_data.py."""

from albert.cli import make_sample_classification_data

if __name__ == "__main__":
  make_sample_classification_data.run()
