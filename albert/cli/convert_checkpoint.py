r"""Converts ALBERT checkpoints: original TF1, Hugging Face, TF Hub, the Model
Garden's, keras-hub's and ours.

Into a model directory of ours (ckpt-N, model_config.json, albert_config.json,
operative_config.gin):

  python tools/convert_checkpoint.py --from=original \
      --checkpoint=albert_base/model.ckpt-best \
      --albert_config=albert_base/albert_config.json --output_dir=runs/base
  python tools/convert_checkpoint.py --from=huggingface \
      --checkpoint=hf/albert-base-v2 --output_dir=runs/base
  python tools/convert_checkpoint.py --from=tf_hub \
      --checkpoint=albert_en_base_3 --output_dir=runs/base
  python tools/convert_checkpoint.py --from=model_garden \
      --checkpoint=tf2/albert_base/ckpt-1 \
      --albert_config=tf2/albert_base/albert_config.json --output_dir=runs/base

Out of one (--checkpoint: the model directory, or a ckpt-N inside it):

  python tools/convert_checkpoint.py --to=original \
      --checkpoint=runs/base --output_dir=export/tf1
  python tools/convert_checkpoint.py --to=huggingface \
      --checkpoint=runs/base/ckpt-5000 --output_dir=export/hf
  python tools/convert_checkpoint.py --to=model_garden \
      --checkpoint=runs/base --output_dir=export/model_garden
  python tools/convert_checkpoint.py --to=keras_hub --checkpoint=runs/base \
      --spm_model_file=30k-clean.model --output_dir=export/keras_hub
  python tools/convert_checkpoint.py --from=sentence_transformers \
      --checkpoint=paraphrase-albert-small-v2 --output_dir=runs/embedder
  python tools/convert_checkpoint.py --to=sentence_transformers \
      --checkpoint=runs/embedder --output_dir=export/st

--optimizer_slots (original format only) carries LAMB's moments and the
global step across as well, so `python -m albert.run_pretraining
--model_dir=runs/base` resumes from a released pretraining checkpoint.

Fine-tuned models: give the task's recipe and size, as to run_finetuning;
the head goes along (classification and regression, RACE, token
classification, SQuAD v1.1 both ways; the SQuAD v2.0 head to and from the
original only, transformers has no class for it):

  python tools/convert_checkpoint.py --to=huggingface --checkpoint=runs/mnli \
      --gin_file=gin/finetune/mnli.gin --gin_file=gin/base.gin \
      --output_dir=export/mnli_hf        # AlbertForSequenceClassification
  python tools/convert_checkpoint.py --from=original \
      --checkpoint=glue/MNLI/model.ckpt-best --gin_file=gin/finetune/mnli.gin \
      --output_dir=runs/mnli             # eval / predict / export it

Own-data recipes also take --data_dir (their labels come from the training
file) unless the model directory has its labels.json.
Errors are one line on stderr; the output directory is then not created.
See docs/checkpoint_conversion.md.
"""

from absl import flags
from absl import logging

from albert import cli
from albert.checkpoint_conversion import convert as convert_lib
from albert.checkpoint_conversion.convert import FROM_FORMATS
from albert.checkpoint_conversion.convert import TO_FORMATS

FROM = flags.DEFINE_enum(
    "from",
    None,
    FROM_FORMATS,
    "Convert from this format into a model directory of ours.",
)
TO = flags.DEFINE_enum(
    "to",
    None,
    TO_FORMATS,
    "Convert a model directory of ours into this format.",
)
CHECKPOINT = flags.DEFINE_string(
    "checkpoint",
    None,
    "Input: the TF1 checkpoint prefix (--from=original), the transformers "
    "model directory (--from=huggingface), the SavedModel directory "
    "(--from=tf_hub), the object-based checkpoint prefix "
    "(--from=model_garden), the preset directory (--from=keras_hub), or our "
    "model directory or a ckpt-N in it (--to).",
)
ALBERT_CONFIG = flags.DEFINE_string(
    "albert_config",
    None,
    "--from=original|model_garden: the checkpoint's albert_config.json "
    "(default: the one beside the checkpoint); --from=tf_hub: only for a "
    "SavedModel that does not describe its architecture.",
)
OUTPUT_DIR = flags.DEFINE_string(
    "output_dir", None, "Directory to create; must not exist or be empty."
)
GIN_FILE = flags.DEFINE_multi_string(
    "gin_file",
    [],
    "A fine-tuned model: the task's recipe and size files (as for "
    "albert.run_finetuning); the head is converted with the encoder.",
)
GIN_PARAM = flags.DEFINE_multi_string(
    "gin_param", [], "Extra gin bindings (fine-tuned)."
)
DATA_DIR = flags.DEFINE_string(
    "data_dir",
    None,
    "Fine-tuned own-data models without labels.json: the data directory "
    "whose training file gives the labels.",
)
SPM_MODEL_FILE = flags.DEFINE_string(
    "spm_model_file",
    None,
    "--to=keras_hub: the model's SentencePiece model, written as the "
    "preset's tokenizer (fine-tuned: default the recipe's).",
)
OPTIMIZER_SLOTS = flags.DEFINE_bool(
    "optimizer_slots",
    False,
    "Original format only: also convert the adam_m/adam_v slots (LAMB's m "
    "and v) and global_step, to resume pretraining.",
)


def convert() -> str:
  """Runs the conversion the flags ask for; returns what was written."""
  if (FROM.value is None) != (TO.value is None):
    cli.require_flags("checkpoint", "output_dir")
  return convert_lib.convert(
      source=FROM.value,
      target=TO.value,
      checkpoint=CHECKPOINT.value,
      output_dir=OUTPUT_DIR.value,
      albert_config=ALBERT_CONFIG.value,
      optimizer_slots=OPTIMIZER_SLOTS.value,
      spm_model_file=SPM_MODEL_FILE.value,
      gin_file=GIN_FILE.value,
      gin_param=GIN_PARAM.value,
      data_dir=DATA_DIR.value,
  )


def main(argv):
  cli.unexpected_arguments(argv)
  logging.set_verbosity(logging.INFO)
  print(convert())


def run():
  """Entry point of tools/, console scripts and `python -m`."""
  cli.run_command(main, __doc__)


if __name__ == "__main__":
  run()
