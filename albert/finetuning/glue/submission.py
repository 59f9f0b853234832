"""GLUE test-set predictions -> the TSV files gluebenchmark.com accepts.

Each file (CoLA.tsv, MNLI-m.tsv, AX.tsv, ...) is a header `index\tprediction`
and one row per test example: the example's index from the test file and the
predicted label string, or for STS-B the score with 3 decimals in [0, 5].
"""

import math
import os
from typing import Sequence, Union

import numpy as np

from official.errors import InputError
from albert.finetuning.glue.data import GlueTaskSpec, get_glue_task
from official.io import atomic_write
from official.io import files

_MAX_SCORE = 5.0  # STS-B similarity scores lie in [0, 5].


def write_submission(
    task: str,
    split: str,
    guids_or_indices: Sequence[Union[str, int]],
    predictions: Sequence[Union[int, float]],
    output_dir: str,
) -> str:
  """Writes the submission file of one test split, atomically.

  Args:
    task: a key of `GLUE_TASKS` or the GLUE name; "ax" for the diagnostic
      set (predictions of an MNLI model).
    split: one of the task's `predict_splits` ("test"; MNLI "test_matched"
      or "test_mismatched").
    guids_or_indices: [N] the examples' guids from `read_glue`
      ("test-17") or their bare indices (17), in test-file order.
    predictions: [N] class indices into the task's labels, or float scores
      for STS-B (clipped to [0, 5]).
    output_dir: where to write; created if missing.

  Returns:
    The path of the written file, OUTPUT_DIR/{submission file name}.

  Raises:
    InputError: unknown task or split, lengths differ, a guid of another
      split, or a class index out of range.
  """
  spec = get_glue_task(task)
  if split not in spec.predict_splits:
    raise InputError(
        f"GLUE {spec.name} has no test split {split!r}; its "
        f"test splits are {', '.join(spec.predict_splits)}"
    )
  if len(guids_or_indices) != len(predictions):
    raise InputError(
        f"{len(guids_or_indices)} guids but "
        f"{len(predictions)} predictions for GLUE {spec.name} "
        f"{split}; pass one prediction per test example"
    )
  lines = ["index\tprediction"]
  for guid, prediction in zip(guids_or_indices, predictions):
    lines.append(f"{_index(guid, split)}\t{_prediction(spec, prediction)}")
  files.makedirs(output_dir)
  path = os.path.join(output_dir, spec.submission_files[split])
  atomic_write.write_atomic(path, "\n".join(lines) + "\n")
  return path


def _index(guid: Union[str, int], split: str) -> str:
  """The test-file index in a guid "{split}-{index}" or a bare index."""
  index = str(guid)
  if index.startswith(f"{split}-"):
    index = index[len(split) + 1 :]
  if not index.isdigit():
    raise InputError(
        f"guid {guid!r} is neither '{split}-<index>' nor an "
        f"index; pass the guids read_glue gave the {split} "
        "examples"
    )
  return index


def _prediction(spec: GlueTaskSpec, prediction: Union[int, float]) -> str:
  """A class index as its label string, or a score as "%.3f" in [0, 5]."""
  if spec.is_regression:
    if not math.isfinite(prediction):
      raise InputError(
          f"STS-B prediction {prediction} is not a finite "
          "number; check the model's outputs"
      )
    return f"{float(np.clip(prediction, 0.0, _MAX_SCORE)):.3f}"
  if int(prediction) != prediction or not 0 <= prediction < len(spec.labels):
    raise InputError(
        f"prediction {prediction} is not a class index of "
        f"GLUE {spec.name} (0..{len(spec.labels) - 1} for "
        f"{spec.labels})"
    )
  return spec.labels[int(prediction)]
