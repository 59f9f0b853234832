"""The error for checkpoints, configs and directories that cannot convert."""


class ConversionError(ValueError):
  """Bad conversion input: one line: which input, what is wrong, what to do.

  `tools/convert_checkpoint.py` prints it prefixed `convert_checkpoint: error:`
  and exits non-zero; the output directory is not created.
  """
