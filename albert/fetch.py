"""`python -m albert.fetch`: the command users type.

Its flags and main are albert/cli/fetch.py.
"""

from albert.cli.fetch import run

if __name__ == "__main__":
  run()
