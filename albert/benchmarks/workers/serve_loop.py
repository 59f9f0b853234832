"""The worker side of the serving benchmarks: warm up, then take turns.

Each function warms the worker's timed call up, prints the worker's JSON
line of information, times one call per request line of stdin and prints
the peak RSS when stdin closes: the protocol of `official.benchmark.turns`
(its `serve`), which imports only the standard library.
"""

from typing import Any, Callable, Dict

from official.benchmark import turns


def serve_batches(
    run: Callable[[int], None],
    info: Dict,
    batch_size: int,
    warmups: int = 3,
) -> None:
  """Times `run(batch)` per request line "<batch>" (1 or `batch_size`),
  after `warmups` calls at batch 1 and one at `batch_size` (a request mix's
  workers warm up over every text of the mix: each shape seen once)."""
  for _ in range(warmups):
    run(1)
  for _ in range(max(1, warmups // batch_size)):
    run(batch_size)
  turns.serve(lambda request: run(int(request)), info)


def serve_calls(
    run: Callable[[], None],
    pooled: Callable[[], Any],
    info: Dict,
    warmups: int = 3,
) -> None:
  """Times `run()` per request line, after `warmups` calls; the first JSON
  line is `info` with "pooled": `pooled()` (the pooled output, a numpy
  array) as a list."""
  for _ in range(warmups):
    run()
  turns.serve(lambda _: run(), dict(info, pooled=pooled().tolist()))
