"""WarmupPolynomialDecay against docs/reference.md section 5, step by step."""

import numpy as np
import pytest

from official.optimization.lr_schedule import WarmupPolynomialDecay

PEAK, WARMUP, TOTAL = 0.00176, 3125, 125000


def _reference(t):
  """lr(t) of the original: linear warmup, then peak * (1 - t / T)."""
  if t < WARMUP:
    return PEAK * t / WARMUP
  return PEAK * (1.0 - min(t, TOTAL) / TOTAL)


@pytest.mark.parametrize(
    "step", [0, 1, 1000, 3124, 3125, 3126, 50000, 64062, 124999, 125000, 130000]
)
def test_albert_schedule_matches_formula(step):
  schedule = WarmupPolynomialDecay(PEAK, TOTAL, warmup_steps=WARMUP)
  assert float(schedule(step)) == pytest.approx(
      _reference(step), rel=1e-5, abs=1e-12
  )


def test_landmarks():
  schedule = WarmupPolynomialDecay(PEAK, TOTAL, warmup_steps=WARMUP)
  assert float(schedule(0)) == 0.0
  assert float(schedule(WARMUP // 2)) == pytest.approx(PEAK / 2, rel=1e-3)
  # Just after warmup the decay is already measured from step 0.
  assert float(schedule(WARMUP)) == pytest.approx(PEAK * (1 - WARMUP / TOTAL))
  assert float(schedule(TOTAL // 2)) == pytest.approx(PEAK / 2, rel=1e-6)
  assert float(schedule(TOTAL)) == 0.0


def _original_with_start(t, start, warmup=WARMUP):
  """optimization.create_optimizer with start_warmup_step, written out:
  warmup on the shifted step (t - start), decay on the unshifted t; the
  negative rate it gives before `start` is 0 here."""
  shifted = t - start
  if shifted < warmup:
    return max(PEAK * shifted / warmup, 0.0)
  return PEAK * (1.0 - min(t, TOTAL) / TOTAL)


@pytest.mark.parametrize(
    "step", [0, 9999, 10000, 10001, 11562, 13124, 13125, 60000, 125000]
)
def test_start_warmup_step_shifts_the_warmup_not_the_decay(step):
  schedule = WarmupPolynomialDecay(
      PEAK, TOTAL, warmup_steps=WARMUP, start_warmup_step=10000
  )
  assert float(schedule(step)) == pytest.approx(
      _original_with_start(step, 10000), rel=1e-5, abs=1e-12
  )


def test_start_warmup_step_by_hand():
  schedule = WarmupPolynomialDecay(
      1.0, 100, warmup_steps=10, start_warmup_step=20
  )
  assert [float(schedule(t)) for t in (0, 19, 20, 25, 29)] == pytest.approx(
      [0.0, 0.0, 0.0, 0.5, 0.9]
  )
  assert float(schedule(30)) == pytest.approx(0.7)  # 1 - 30 / 100
  clone = WarmupPolynomialDecay.from_config(schedule.get_config())
  assert float(clone(25)) == pytest.approx(0.5)


def test_end_value_and_power():
  schedule = WarmupPolynomialDecay(
      1.0, 100, warmup_steps=0, end_learning_rate=0.1, power=2.0
  )
  for t in (0, 10, 50, 99, 100, 150):
    expected = 0.9 * (1 - min(t, 100) / 100) ** 2 + 0.1
    assert float(schedule(t)) == pytest.approx(expected, rel=1e-6)


def test_config_round_trip():
  schedule = WarmupPolynomialDecay(
      0.1, 10, warmup_steps=2, end_learning_rate=0.01
  )
  clone = WarmupPolynomialDecay.from_config(schedule.get_config())
  steps = np.arange(12)
  assert [float(clone(s)) for s in steps] == [float(schedule(s)) for s in steps]


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(peak_learning_rate=1.0, decay_steps=0), "decay_steps=0"),
        (
            dict(peak_learning_rate=1.0, decay_steps=10, warmup_steps=11),
            "warmup_steps=11",
        ),
        (
            dict(peak_learning_rate=-1.0, decay_steps=10),
            "peak_learning_rate=-1.0",
        ),
        (
            dict(peak_learning_rate=1.0, decay_steps=10, start_warmup_step=-1),
            "start_warmup_step=-1",
        ),
    ],
)
def test_bad_arguments(kwargs, message):
  with pytest.raises(ValueError, match=message):
    WarmupPolynomialDecay(**kwargs)
