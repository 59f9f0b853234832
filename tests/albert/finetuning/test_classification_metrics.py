"""Classification metrics and GLUE's per-task selection against values
worked out by hand."""

import math

import pytest

from albert.finetuning import classification_metrics as m
from albert.finetuning.glue.metrics import glue_metrics

# Binary case used below: labels / predictions with, counting by hand,
# TP = 3 (items 0-2), FN = 2 (items 3, 4), TN = 4 (items 5-8), FP = 1 (item 9).
BINARY_LABELS = [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
BINARY_PREDICTIONS = [1, 1, 1, 0, 0, 0, 0, 0, 0, 1]


def test_accuracy():
  assert m.accuracy([1, 0, 1, 1], [1, 1, 1, 0]) == 0.5
  assert m.accuracy(BINARY_PREDICTIONS, BINARY_LABELS) == 0.7  # (3 + 4) / 10


def test_f1():
  # TP = 3, FP = 1, FN = 2: precision 3/4, recall 3/5, F1 = 6 / (6 + 1 + 2).
  assert m.f1(BINARY_PREDICTIONS, BINARY_LABELS) == pytest.approx(2 / 3)
  # TP = 0, FP = 1: precision and recall 0.
  assert m.f1([1, 0], [0, 0]) == 0.0
  # No positives at all: undefined; 0.0 as scikit-learn.
  assert m.f1([0, 0], [0, 0]) == 0.0


def test_matthews_corrcoef_binary():
  # (TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN))
  # = (3*4 - 1*2) / sqrt(4 * 5 * 5 * 6) = 10 / sqrt(600) = 1 / sqrt(6).
  assert m.matthews_corrcoef(BINARY_PREDICTIONS, BINARY_LABELS) == (
      pytest.approx(0.4082482905)
  )
  # Perfectly wrong.
  assert m.matthews_corrcoef([1, 0, 1, 0], [0, 1, 0, 1]) == (
      pytest.approx(-1.0)
  )


def test_matthews_corrcoef_multiclass():
  # True rows, predicted columns:   C = [[1, 1, 0],
  #                                      [0, 2, 0],
  #                                      [1, 0, 1]]
  # c = trace = 4, s = 6, t = (2, 2, 2), p = (2, 3, 1), t.p = 12,
  # (c s - t.p) / sqrt((s^2 - p.p)(s^2 - t.t)) = 12 / sqrt(22 * 24).
  labels = [0, 0, 1, 1, 2, 2]
  predictions = [0, 1, 1, 1, 2, 0]
  assert m.matthews_corrcoef(predictions, labels) == pytest.approx(0.5222329679)


def test_matthews_corrcoef_is_zero_when_undefined():
  assert m.matthews_corrcoef([1, 1, 1], [0, 1, 0]) == 0.0  # One prediction.
  assert m.matthews_corrcoef([0, 1, 1], [2, 2, 2]) == 0.0  # One label.


def test_pearson():
  # x - mean = (-1, 0, 1); y = (2, 4, 7), mean 13/3, y - mean =
  # (-7/3, -1/3, 8/3). Sum of products 7/3 + 8/3 = 5; sum x^2 = 2,
  # sum y^2 = 114/9. r = 5 / sqrt(2 * 114 / 9) = 0.99339927.
  assert m.pearson([1, 2, 3], [2, 4, 7]) == pytest.approx(0.9933992678)
  assert m.pearson([1, 1, 1], [2, 4, 7]) == 0.0  # Constant: undefined.


def test_spearman_averages_tied_ranks():
  # x = (3, 2, 1, 2) ranks (4, 2.5, 1, 2.5); y = (4, 2, 1, 3) ranks
  # (4, 2, 1, 3). Both means 2.5; deviations (1.5, 0, -1.5, 0) and
  # (1.5, -0.5, -1.5, 0.5): products sum 4.5, squares 4.5 and 5.
  # rho = 4.5 / sqrt(4.5 * 5) = sqrt(0.9). (Without averaging, ranks
  # (4, 2, 1, 3) for x would give 1.0.)
  assert m.spearman([3, 2, 1, 2], [4, 2, 1, 3]) == pytest.approx(math.sqrt(0.9))
  # A run of three ties: x ranks (3, 3, 3, 1) against y ranks (1, 2, 3, 4):
  # deviations (0.5, 0.5, 0.5, -1.5) and (-1.5, -0.5, 0.5, 1.5); products
  # sum -0.75 - 0.25 + 0.25 - 2.25 = -3, squares 3 and 5: -3 / sqrt(15).
  assert m.spearman([5.0, 5.0, 5.0, 1.0], [1.0, 2.0, 3.0, 4.0]) == (
      pytest.approx(-0.7745966692)
  )


def test_glue_metrics_per_task():
  assert glue_metrics("sst2", [1, 0, 1, 1], [1, 1, 1, 0]) == {"accuracy": 0.5}
  cola = glue_metrics("cola", BINARY_PREDICTIONS, BINARY_LABELS)
  assert cola == pytest.approx({"accuracy": 0.7, "mcc": 0.4082482905})
  # Accuracy 7/10, F1 2/3, their mean 41/60.
  mrpc = glue_metrics("MRPC", BINARY_PREDICTIONS, BINARY_LABELS)
  assert mrpc == pytest.approx(
      {"accuracy": 0.7, "f1": 2 / 3, "accuracy_and_f1": 41 / 60}
  )
  assert glue_metrics("qqp", BINARY_PREDICTIONS, BINARY_LABELS) == mrpc
  # Monotonic, so Spearman is 1; Pearson from test_pearson.
  stsb = glue_metrics("stsb", [1.0, 2.0, 3.0], [2.0, 4.0, 7.0])
  assert stsb == pytest.approx(
      {
          "pearson": 0.9933992678,
          "spearman": 1.0,
          "corr": (0.9933992678 + 1.0) / 2,
      }
  )
  assert set(glue_metrics("mnli", [0, 1, 2], [0, 1, 1])) == {"accuracy"}


def test_lengths_must_agree():
  with pytest.raises(
      ValueError,
      match=(
          r"predictions \(3 values\) and labels \(2 values\) must be equally "
          "long and non-empty"
      ),
  ):
    m.accuracy([1, 0, 1], [1, 0])
  with pytest.raises(ValueError, match="non-empty"):
    m.f1([], [])
