r"""Queries an exported serving SavedModel with raw text.

  python tools/query_saved_model.py --saved_model=exported/serving \
      --fill_mask="the [MASK] returns a list." \
      --first="It opens the file." --second="Then it reads a line."

Imports only TensorFlow and TensorFlow Text, as a serving process would.
"""

import sys

from absl import flags
import tensorflow as tf
import tensorflow_text  # noqa: F401 (registers the ops)

from albert import cli

SAVED_MODEL = flags.DEFINE_string(
    "saved_model", None, "The `serving` SavedModel directory."
)
FILL_MASK = flags.DEFINE_multi_string(
    "fill_mask", [], "Text with [MASK]s to fill."
)
FIRST = flags.DEFINE_string("first", None, "First segment (sentence_order).")
SECOND = flags.DEFINE_string("second", None, "Second segment (sentence_order).")


def main(argv):
  del argv
  if not SAVED_MODEL.value:
    sys.exit("query_saved_model: --saved_model is required")
  try:
    model = tf.saved_model.load(SAVED_MODEL.value)
  except (OSError, ValueError, tf.errors.OpError) as e:
    sys.exit(
        f"query_saved_model: cannot load {SAVED_MODEL.value}: "
        f"{str(e).strip().splitlines()[0]}"
    )
  if FILL_MASK.value:
    out = model.signatures["fill_mask"](text=tf.constant(FILL_MASK.value))
    for i, text in enumerate(FILL_MASK.value):
      print(f"fill_mask: {text}")
      for m, position in enumerate(out["mask_positions"][i].numpy()):
        if position < 0:
          continue
        # The bare word-start piece has no text once its mark is dropped.
        answers = ", ".join(
            f"{t.decode() or '▁'} ({s:.3f})"
            for t, s in zip(
                out["top_k_tokens"][i, m].numpy(),
                out["top_k_scores"][i, m].numpy(),
            )
        )
        print(f"  [MASK] at token {position}: {answers}")
  if FIRST.value is not None and SECOND.value is not None:
    out = model.signatures["sentence_order"](
        first=tf.constant([FIRST.value]), second=tf.constant([SECOND.value])
    )
    print(
        f"sentence_order: P(in order) = "
        f"{float(out['in_order_probability'][0]):.3f}"
    )


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
