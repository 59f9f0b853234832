"""official.core.host: the cores this process may use."""

import os

from official.core import host


def test_available_cores_is_the_affinity_mask():
  if hasattr(os, "sched_getaffinity"):
    assert host.available_cores() == len(os.sched_getaffinity(0))
  assert 1 <= host.available_cores() <= os.cpu_count()


def test_available_cores_without_affinity_is_the_cpu_count(monkeypatch):
  monkeypatch.delattr(os, "sched_getaffinity", raising=False)
  monkeypatch.setattr(os, "cpu_count", lambda: 7)
  assert host.available_cores() == 7
  monkeypatch.setattr(os, "cpu_count", lambda: None)  # undeterminable
  assert host.available_cores() == 1
