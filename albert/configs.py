"""Where `--gin_file` names are found: the packaged gin recipes.

The repository's top-level `gin/` directory ships inside the package as
`albert/gin/` (in a checkout `albert/gin` is a link to `../gin`; a wheel holds
a copy). A `--gin_file` value is looked up as given (relative to the current
directory) first, then in the package, so `gin/base.gin`,
`gin/finetune/mnli.gin`, `base.gin` and `finetune/mnli.gin` all work from any
directory, and a user's own file can `include 'gin/base.gin'`.
"""

import os
from typing import Sequence

from official.config import gin_files

_PACKAGE = os.path.dirname(os.path.abspath(__file__))
# The packaged recipes, `albert/gin/`.
GIN_DIR = os.path.join(_PACKAGE, "gin")
# `gin/base.gin` is found under the package, `base.gin` under its gin/.
SEARCH_PATHS = (_PACKAGE, GIN_DIR)


def parse(gin_files_: Sequence[str], gin_params: Sequence[str] = ()) -> None:
  """`official.config.gin_files.parse_gin` with the packaged recipes."""
  gin_files.parse_gin(gin_files_, gin_params, search_paths=SEARCH_PATHS)


def recipes() -> list:
  """The packaged gin files, as `gin/...` names, sorted."""
  names = []
  for root, _, files in os.walk(GIN_DIR, followlinks=True):
    for name in files:
      if name.endswith(".gin"):
        rel = os.path.relpath(os.path.join(root, name), GIN_DIR)
        names.append("gin/" + rel.replace(os.sep, "/"))
  return sorted(names)
