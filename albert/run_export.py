"""`python -m albert.run_export`: the command users type.

Its flags and main are albert/cli/run_export.py.
"""

from albert.cli.run_export import run

if __name__ == "__main__":
  run()
