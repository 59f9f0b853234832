"""official.benchmark.peers: optional peers found, not imported."""

import sys

from official.benchmark import peers


def test_installed_finds_modules_without_importing_them():
  assert "this" not in sys.modules  # the standard library's Zen of Python
  assert peers.installed("this", "json")
  assert "this" not in sys.modules
  assert not peers.installed("json", "no_such_peer_module")
  assert peers.installed()  # no peers asked for: nothing missing
