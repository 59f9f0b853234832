"""The error for checkpoints, configs and directories that cannot convert."""


class ConversionError(ValueError):
  """Bad conversion input: one line: which input, what is wrong, what to do.

  `tools/convert_checkpoint.py` prints it prefixed `convert_checkpoint: error:`
  and exits non-zero; the output directory is not created.
  """


def first_line(error: BaseException) -> str:
  """First non-empty line of an error's message (library errors are long)."""
  lines = [line.strip() for line in str(error).splitlines() if line.strip()]
  return lines[0] if lines else type(error).__name__
