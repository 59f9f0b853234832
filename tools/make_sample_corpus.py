"""Runs albert/cli/make_sample_corpus.py."""

from albert.cli import make_sample_corpus

if __name__ == "__main__":
  make_sample_corpus.run()
