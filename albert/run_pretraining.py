"""`python -m albert.run_pretraining`: the command users type.

Its flags and main are albert/cli/run_pretraining.py.
"""

from albert.cli.run_pretraining import run

if __name__ == "__main__":
  run()
