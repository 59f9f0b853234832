"""The error raised for bad user input (files, models, flag values)."""


class InputError(ValueError):
  """Bad input: the message is one line that says what and what to do.

  Command-line tools print the message and exit non-zero; nothing is left
  behind in the output location.
  """
