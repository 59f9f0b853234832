r"""Converts ALBERT checkpoints: original TF1, Hugging Face and ours.

Into a model directory of ours (ckpt-N, model_config.json, albert_config.json,
operative_config.gin):

  python tools/convert_checkpoint.py --from=original \
      --checkpoint=albert_base/model.ckpt-best \
      --albert_config=albert_base/albert_config.json --output_dir=runs/base
  python tools/convert_checkpoint.py --from=huggingface \
      --checkpoint=hf/albert-base-v2 --output_dir=runs/base

Out of one (--checkpoint: the model directory, or a ckpt-N inside it):

  python tools/convert_checkpoint.py --to=original \
      --checkpoint=runs/base --output_dir=export/tf1
  python tools/convert_checkpoint.py --to=huggingface \
      --checkpoint=runs/base/ckpt-5000 --output_dir=export/hf

--optimizer_slots (original format only) carries LAMB's moments and the
global step across as well, so `python -m albert.run_pretraining
--model_dir=runs/base` resumes from a released pretraining checkpoint.
Errors are one line on stderr; the output directory is then not created.
See docs/checkpoint_conversion.md.
"""

from absl import flags
from absl import logging

from albert import cli
from albert.checkpoint_conversion import converter
from albert.checkpoint_conversion.errors import ConversionError

FORMATS = ("original", "huggingface")

FLAGS = flags.FLAGS
flags.DEFINE_enum(
    "from",
    None,
    FORMATS,
    "Convert from this format into a model directory of ours.",
)
flags.DEFINE_enum(
    "to", None, FORMATS, "Convert a model directory of ours into this format."
)
flags.DEFINE_string(
    "checkpoint",
    None,
    "Input: the TF1 checkpoint prefix (--from=original), the transformers "
    "model directory (--from=huggingface), or our model directory or a "
    "ckpt-N in it (--to).",
)
flags.DEFINE_string(
    "albert_config",
    None,
    "--from=original: the checkpoint's albert_config.json (default: the one "
    "beside the checkpoint).",
)
flags.DEFINE_string(
    "output_dir", None, "Directory to create; must not exist or be empty."
)
flags.DEFINE_bool(
    "optimizer_slots",
    False,
    "Original format only: also convert the adam_m/adam_v slots (LAMB's m "
    "and v) and global_step, to resume pretraining.",
)


def convert() -> str:
  """Runs the conversion the flags ask for; returns what was written."""
  source, target = FLAGS["from"].value, FLAGS.to
  if (source is None) == (target is None):
    raise ConversionError(
        "give exactly one of --from=original|huggingface "
        "or --to=original|huggingface"
    )
  if not FLAGS.checkpoint:
    raise ConversionError("--checkpoint is required (the input to convert)")
  if not FLAGS.output_dir:
    raise ConversionError("--output_dir is required (a new directory)")
  if FLAGS.albert_config and source != "original":
    raise ConversionError("--albert_config is read with --from=original only")
  if FLAGS.optimizer_slots and "original" not in (source, target):
    raise ConversionError(
        "--optimizer_slots needs the original format "
        "(Hugging Face checkpoints hold no optimizer state)"
    )
  common = dict(checkpoint=FLAGS.checkpoint, output_dir=FLAGS.output_dir)
  if source == "original":
    return converter.from_original(
        albert_config=FLAGS.albert_config,
        optimizer_slots=FLAGS.optimizer_slots,
        **common,
    )
  if source == "huggingface":
    return converter.from_huggingface(**common)
  if target == "original":
    return converter.to_original(
        optimizer_slots=FLAGS.optimizer_slots, **common
    )
  return converter.to_huggingface(**common)


def main(argv):
  cli.unexpected_arguments(argv)
  logging.set_verbosity(logging.INFO)
  print(convert())


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
