"""Runs albert/cli/check_tf_serving.py."""

from albert.cli import check_tf_serving

if __name__ == "__main__":
  check_tf_serving.run()
