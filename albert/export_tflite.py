"""`python -m albert.export_tflite`: the command users type.

Its flags and main are albert/cli/export_tflite.py.
"""

from albert.cli.export_tflite import run

if __name__ == "__main__":
  run()
