r"""Fetches released ALBERT models by name into ready model directories.

  albert-fetch albert_base_v2          # prints the model directory's path
  albert-fetch hf://albert/albert-base-v2@main
  albert-fetch ~/Downloads/albert_base_v2.tar.gz
  albert-fetch --list                  # the registry's names and sources

A name is downloaded once (progress: bytes, rate, ETA; an interrupted
download resumes), verified, unpacked and converted into the cache
($ALBERT_TF2_CACHE, default ~/.cache/albert_tf2); later fetches, and every
command that takes a name (--init_checkpoint=albert_base_v2,
--checkpoint=..., --model_dir=...), use the cached copy. Offline
(ALBERT_TF2_OFFLINE=1 or HF_HUB_OFFLINE=1), only the cache is read. Mirrors:
ALBERT_TF2_MODELS_ENDPOINT (the original release's bucket) and HF_ENDPOINT
(the Hugging Face hub). See docs/models.md.
"""

from absl import flags
from absl import logging

from albert import cli
from albert.registry import catalog
from albert.registry import fetch as fetch_lib
from official.errors import InputError

LIST = flags.DEFINE_bool(
    "list", False, "Print the registry's models and the cached ones, then exit."
)
SOURCE = flags.DEFINE_enum(
    "source",
    None,
    catalog.KINDS,
    "Fetch a name from its sources of this kind only (default: each in "
    "the registry's order until one works).",
)


def main(argv):
  logging.set_verbosity(logging.INFO)
  specs = argv[1:]
  if LIST.value:
    if specs:
      raise InputError("--list takes no model names")
    print("\n".join(catalog.table()))
    for key, path in fetch_lib.cached():
      print(f"cached: {key}  {path}")
    return
  if not specs:
    raise InputError(
        "name a model to fetch (albert-fetch --list shows the names), "
        "hf://OWNER/REPO, or a release directory or archive"
    )
  for spec in specs:
    print(fetch_lib.fetch(spec, source=SOURCE.value), flush=True)


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
