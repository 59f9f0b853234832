"""Runs albert/cli/run_ablation.py."""

from albert.cli import run_ablation

if __name__ == "__main__":
  run_ablation.run()
