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
from official.errors import InputError
from official.errors import first_line

SAVED_MODEL = flags.DEFINE_string(
    "saved_model", None, "The `serving` SavedModel directory."
)
FILL_MASK = flags.DEFINE_multi_string(
    "fill_mask", [], "Text with [MASK]s to fill."
)
FIRST = flags.DEFINE_string("first", None, "First segment (sentence_order).")
SECOND = flags.DEFINE_string("second", None, "Second segment (sentence_order).")


def _warn(text: str) -> None:
  sys.stdout.flush()
  print(f"query_saved_model: warning: {text}", file=sys.stderr, flush=True)


def _questions():
  """([(number, fill_mask text)], (first, second) or None) worth asking;
  warns about the rest and raises InputError when nothing is left."""
  cli.require_flags("saved_model")
  texts = []
  for number, text in enumerate(FILL_MASK.value, 1):
    if "[MASK]" in text:
      texts.append((number, text))
    else:
      _warn(
          f"--fill_mask text {number} has no [MASK], nothing to fill: put "
          "[MASK] where a word should be"
      )
  pair = None
  if FIRST.value is not None and SECOND.value is not None:
    pair = (FIRST.value, SECOND.value)
  elif FIRST.value is not None or SECOND.value is not None:
    given, missing = ("first", "second") if FIRST.value else ("second", "first")
    _warn(
        f"--{given} without --{missing}: sentence_order needs both, so it is "
        "not asked"
    )
  if not texts and pair is None:
    raise InputError(
        "nothing to ask: give --fill_mask with a [MASK], and/or --first with "
        "--second"
    )
  return texts, pair


def _load(path: str):
  try:
    return tf.saved_model.load(path)
  except (OSError, ValueError, tf.errors.OpError) as e:
    raise InputError(
        f"cannot load {path}: {first_line(e)}; point --saved_model at "
        "EXPORT_DIR/serving (written by albert.run_export)"
    ) from e


def _signature(model, path: str, name: str):
  """The signature `name`; InputError if the SavedModel has none of it."""
  sigs = model.signatures
  if name not in sigs:
    raise InputError(
        f"{path} has no {name!r} signature (it has {sorted(sigs)}): point "
        "--saved_model at EXPORT_DIR/serving"
    )
  return sigs[name]


def _warn_truncated(number: int, masks: int, kept: int) -> None:
  """Warns that `masks - kept` of text `number`'s [MASK]s were cut off."""
  lost = masks - kept
  if masks == 1:
    subject = f"the [MASK] of text {number}"
  elif lost == masks:
    subject = f"the {masks} [MASK]s of text {number}"
  else:
    subject = f"{lost} of the {masks} [MASK]s of text {number}"
  lies, was = ("lies", "was") if lost == 1 else ("lie", "were")
  _warn(
      f"{subject} {lies} past the model's seq_length and {was} truncated "
      "away: shorten the text"
  )


def main(argv):
  cli.unexpected_arguments(argv)
  texts, pair = _questions()
  path = SAVED_MODEL.value
  model = _load(path)
  fill_mask = _signature(model, path, "fill_mask") if texts else None
  sentence_order = _signature(model, path, "sentence_order") if pair else None
  if fill_mask is not None:
    out = fill_mask(text=tf.constant([text for _, text in texts]))
    for i, (number, text) in enumerate(texts):
      print(f"fill_mask: {text}")
      kept = 0
      for m, position in enumerate(out["mask_positions"][i].numpy()):
        if position < 0:
          continue
        kept += 1
        # The bare word-start piece has no text once its mark is dropped.
        answers = ", ".join(
            f"{t.decode() or '▁'} ({s:.3f})"
            for t, s in zip(
                out["top_k_tokens"][i, m].numpy(),
                out["top_k_scores"][i, m].numpy(),
            )
        )
        print(f"  [MASK] at token {position}: {answers}")
      if kept < text.count("[MASK]"):
        _warn_truncated(number, text.count("[MASK]"), kept)
  if sentence_order is not None:
    out = sentence_order(
        first=tf.constant([pair[0]]), second=tf.constant([pair[1]])
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
