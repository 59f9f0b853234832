"""`python -m albert.run_finetuning`: the command users type.

Its flags and main are albert/cli/run_finetuning.py.
"""

from albert.cli.run_finetuning import run

if __name__ == "__main__":
  run()
