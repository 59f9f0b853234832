r"""What a short run pays before its work: fresh processes of
`albert.run_pretraining` (`--command=pretraining`: gin/tiny.gin at seq 64, 4
steps, one evaluation, on the `make demo` examples) or `albert.run_export`
(`--command=export`: the `make demo` model's three SavedModels, as `make
demo` writes them), timed whole and for AutoGraph's rewriting of Python
functions (TensorFlow's private `autograph.impl.api._convert_actual`,
wrapped in the child; the driver stops with one line if that is gone).

Each `--source` is a checkout whose `albert` and `official` the runs import
(its root goes first on PYTHONPATH); the runs alternate between the sources,
round by round, so a change of machine load hits each alike. Medians and
the per-round ratio of each source's wall time to the first's are printed.
docs/performance.md, "Start-up: AutoGraph", reports a run of:

  make demo
  git worktree add /tmp/before <commit>
  .venv/bin/python -m albert.experiments.startup --demo_dir=demo_out \
      --source=/tmp/before --source=. --rounds=5 [--command=export]
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from absl import app
from absl import flags

DEMO_DIR = flags.DEFINE_string("demo_dir", "demo_out", "`make demo` output.")
SOURCES = flags.DEFINE_multi_string(
    "source", ["."], "Checkouts to time, in turn (the first is the baseline)."
)
ROUNDS = flags.DEFINE_integer("rounds", 5, "Runs per source.")
COMMAND = flags.DEFINE_enum(
    "command", "pretraining", ["pretraining", "export"], "What each run does."
)

# The child: time AutoGraph's conversions, then become the module argv[1].
_CHILD = r"""
import atexit, json, runpy, sys, time
try:
  from tensorflow.python.autograph.impl import api
  convert = api._convert_actual
except (ImportError, AttributeError) as e:
  sys.exit(f"startup: this TensorFlow has no autograph _convert_actual ({e})")
spent = [0.0, 0]
def timed(entity, program_ctx):
  start = time.perf_counter()
  try:
    return convert(entity, program_ctx)
  finally:
    spent[0] += time.perf_counter() - start
    spent[1] += 1
api._convert_actual = timed
atexit.register(lambda: print("AUTOGRAPH " + json.dumps(
    {"seconds": spent[0], "functions": spent[1]}), file=sys.stderr))
module = sys.argv[1]
sys.argv = [module] + sys.argv[2:]
runpy.run_module(module, run_name="__main__")
"""


def _args(demo, model_dir, vocab_size):
  """The child's module and flags."""
  if COMMAND.value == "export":
    with open(os.path.join(demo, "settings.json"), encoding="utf-8") as f:
      seq_length = json.load(f)["seq_length"]
    return [
        "albert.run_export",
        f"--model_dir={demo}/model",
        f"--spm_model_file={demo}/spm.model",
        f"--export_dir={model_dir}/export",
        f"--seq_length={seq_length}",
    ]
  params = [
      f"PretrainTask.train_file_pattern='{demo}/data/train.tfrecord'",
      f"PretrainTask.eval_file_pattern='{demo}/data/eval.tfrecord'",
      f"AlbertConfig.vocab_size={vocab_size}",
      "TRAIN_STEPS=4",
      "OptimizerConfig.warmup_steps=1",
      "TrainerConfig.steps_per_loop=4",
      "TrainerConfig.eval_steps=2",
  ]
  return [
      "albert.run_pretraining",
      "--gin_file=gin/tiny.gin",
      "--gin_file=gin/demo.gin",
      f"--model_dir={model_dir}",
      *[f"--gin_param={p}" for p in params],
  ]


def _run_once(source, demo, vocab_size, work):
  model_dir = tempfile.mkdtemp(dir=work)
  env = dict(os.environ)
  root = os.path.abspath(source)
  env["PYTHONPATH"] = os.pathsep.join(
      [root] + [p for p in [env.get("PYTHONPATH")] if p]
  )
  start = time.perf_counter()
  run = subprocess.run(
      [sys.executable, "-c", _CHILD, *_args(demo, model_dir, vocab_size)],
      cwd=root,
      env=env,
      capture_output=True,
      text=True,
      check=False,
  )
  seconds = time.perf_counter() - start
  if run.returncode != 0:
    last = (run.stderr.strip().splitlines() or ["no output"])[-1]
    raise SystemExit(f"startup: the run in {source} failed: {last}")
  line = [l for l in run.stderr.splitlines() if l.startswith("AUTOGRAPH ")][-1]
  autograph = json.loads(line[len("AUTOGRAPH ") :])
  return {
      "wall_s": seconds,
      "autograph_s": autograph["seconds"],
      "converted": autograph["functions"],
  }


def main(argv):
  del argv
  demo = os.path.abspath(DEMO_DIR.value)
  settings_file = os.path.join(demo, "settings.json")
  if not os.path.exists(settings_file):
    raise SystemExit(
        f"startup: {settings_file} not found; run `make demo` first or give "
        "--demo_dir"
    )
  with open(settings_file, encoding="utf-8") as f:
    vocab_size = json.load(f)["vocab_size"]
  sources = SOURCES.value
  for source in sources:
    if not os.path.isfile(os.path.join(source, "albert", "run_pretraining.py")):
      raise SystemExit(
          f"startup: --source={source} is not a checkout of this repository "
          "(no albert/run_pretraining.py in it); give its root directory"
      )
  times = {s: [] for s in sources}
  with tempfile.TemporaryDirectory(prefix="startup-") as work:
    for r in range(ROUNDS.value):
      for source in sources:
        result = _run_once(source, demo, vocab_size, work)
        times[source].append(result)
        wall, autograph = result["wall_s"], result["autograph_s"]
        print(
            f"round {r + 1}/{ROUNDS.value} {source}: {wall:.2f} s, "
            f"AutoGraph {autograph:.2f} s ({result['converted']} functions "
            "rewritten)",
            flush=True,
        )
  base = times[sources[0]]
  for source in sources:
    runs = times[source]
    ratio = statistics.median(
        a["wall_s"] / b["wall_s"] for a, b in zip(runs, base)
    )
    wall = statistics.median(r["wall_s"] for r in runs)
    autograph = statistics.median(r["autograph_s"] for r in runs)
    print(
        f"{source}: median wall {wall:.2f} s, AutoGraph {autograph:.2f} s, "
        f"{ratio:.2f}x the first source's wall time (per-round median)"
    )


if __name__ == "__main__":
  app.run(main)
