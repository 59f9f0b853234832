"""GLUE: data (the download's files), task, metrics, submission files."""
