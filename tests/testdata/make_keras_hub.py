r"""Makes tests/testdata/keras_hub/ with keras-hub's own code.

  backbone/    `AlbertBackbone.save_to_preset` of a tiny random ALBERT with
               two groups of two inner layers (4 layers), plus its
               `AlbertTokenizer` (the SentencePiece model of original_hub)
  classifier/  `AlbertTextClassifier.save_to_preset` of the same backbone
               with a random 3-class head and its preprocessor
`outputs.npz` holds what keras-hub computes for the inputs of
original_hub/inputs.npz (`backbone/*`, `classifier/logits`) and the token
ids its tokenizer gives for TEXT (`tokenizer/ids`).

With --ours=DIR (what our `convert_checkpoint --to=keras_hub` wrote of
these two presets: DIR/backbone and DIR/classifier) it loads them with
`AlbertBackbone.from_preset` and `AlbertTextClassifier.from_preset` and
records the outputs as `ours/*` in ours.npz; with --ours_hf=DIR (our
`--to=huggingface` of the backbone, kept as keras_hub/ours_hf) it loads that
with `AlbertBackbone.from_preset` as well (`ours_hf/*`). The tests check
that we still write the same files. Made with, in this repository's
environment (G: the fixture's AlbertConfig as --gin_param bindings, see
tests/albert/checkpoint_conversion/test_convert_keras_hub.py):

  python tools/convert_checkpoint.py --from=keras_hub \
      --checkpoint=tests/testdata/keras_hub/backbone --output_dir=/tmp/kc/bb
  python tools/convert_checkpoint.py --to=keras_hub --checkpoint=/tmp/kc/bb \
      --spm_model_file=SPM --output_dir=/tmp/kc/ours/backbone
  python tools/convert_checkpoint.py --from=keras_hub \
      --checkpoint=tests/testdata/keras_hub/classifier --output_dir=/tmp/kc/cls \
      --gin_file=gin/finetune/mnli.gin --gin_param="GlueTask.seq_length = 12"
  python tools/convert_checkpoint.py --to=keras_hub --checkpoint=/tmp/kc/cls \
      --spm_model_file=SPM --output_dir=/tmp/kc/ours/classifier \
      --gin_file=gin/finetune/mnli.gin --gin_param="GlueTask.seq_length = 12" G
  python tools/convert_checkpoint.py --to=huggingface --checkpoint=/tmp/kc/bb \
      --output_dir=tests/testdata/keras_hub/ours_hf
  (side environment) make_keras_hub.py ... --ours=/tmp/kc/ours \
      --ours_hf=tests/testdata/keras_hub/ours_hf

(SPM: tests/testdata/original_hub/hub_module/assets/30k-clean.model)

Not part of the test run: run it by hand in a side environment (keras-hub
needs Keras 3):

  python3.11 -m venv /tmp/kh
  /tmp/kh/bin/pip install keras-hub==0.32.0 'tensorflow==2.21.*' \
      'tensorflow-text==2.21.*'
  KERAS_BACKEND=tensorflow /tmp/kh/bin/python tests/testdata/make_keras_hub.py \
      --original=tests/testdata/original_hub --out=tests/testdata/keras_hub
"""

import argparse
import json
import os
import shutil

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import keras_hub  # noqa: E402
import numpy as np  # noqa: E402

SEED = 20261127
TEXT = "the one of his and was for in it"
ARCHITECTURE = dict(
    vocabulary_size=40,
    num_layers=4,
    num_heads=3,
    embedding_dim=8,
    hidden_dim=12,
    intermediate_dim=20,
    num_groups=2,
    num_inner_repetitions=2,
    max_sequence_length=16,
)


def _features(inputs):
  return dict(
      token_ids=inputs["input_ids"],
      segment_ids=inputs["segment_ids"],
      padding_mask=inputs["input_mask"],
  )


def _record(outputs, prefix, backbone, classifier, features):
  result = backbone(features)
  for key in ("sequence_output", "pooled_output"):
    outputs[f"{prefix}/{key}"] = keras.ops.convert_to_numpy(result[key])
  logits = classifier.predict(features, verbose=0)
  outputs[f"{prefix}/logits"] = np.asarray(logits)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--original", required=True)
  parser.add_argument("--out", required=True)
  parser.add_argument("--ours", default=None)
  parser.add_argument("--ours_hf", default=None)
  args = parser.parse_args()
  out = os.path.abspath(args.out)
  inputs = dict(np.load(os.path.join(args.original, "inputs.npz")))
  features = _features(inputs)

  if args.ours or args.ours_hf:
    outputs = {}
    if args.ours:
      backbone = keras_hub.models.AlbertBackbone.from_preset(
          os.path.join(args.ours, "backbone")
      )
      classifier = keras_hub.models.AlbertTextClassifier.from_preset(
          os.path.join(args.ours, "classifier")
      )
      classifier.preprocessor = None
      _record(outputs, "ours", backbone, classifier, features)
      tokenizer = keras_hub.models.AlbertTokenizer.from_preset(
          os.path.join(args.ours, "backbone")
      )
      outputs["ours/tokenizer_ids"] = np.asarray(tokenizer(TEXT))
    if args.ours_hf:
      backbone = keras_hub.models.AlbertBackbone.from_preset(args.ours_hf)
      result = backbone(features)
      for key in ("sequence_output", "pooled_output"):
        outputs[f"ours_hf/{key}"] = keras.ops.convert_to_numpy(result[key])
    np.savez(os.path.join(out, "ours.npz"), **outputs)
    for key, value in sorted(outputs.items()):
      print(key, value.shape)
    return

  shutil.rmtree(out, ignore_errors=True)
  os.makedirs(out)
  keras.utils.set_random_seed(SEED)
  backbone = keras_hub.models.AlbertBackbone(**ARCHITECTURE)
  tokenizer = keras_hub.models.AlbertTokenizer(
      proto=os.path.join(
          args.original, "hub_module", "assets", "30k-clean.model"
      )
  )
  preprocessor = keras_hub.models.AlbertTextClassifierPreprocessor(
      tokenizer=tokenizer, sequence_length=12
  )
  classifier = keras_hub.models.AlbertTextClassifier(
      backbone=backbone, num_classes=3, preprocessor=preprocessor
  )
  rng = np.random.RandomState(SEED)
  for v in classifier.weights:
    value = rng.normal(0.0, 0.5, v.shape).astype(np.float32)
    v.assign(1.0 + 0.2 * value if "gamma" in v.path else value)
  backbone.save_to_preset(os.path.join(out, "backbone"))
  tokenizer.save_to_preset(os.path.join(out, "backbone"))
  classifier.save_to_preset(os.path.join(out, "classifier"))

  outputs = {}
  classifier.preprocessor = None  # token ids in
  _record(outputs, "keras_hub", backbone, classifier, features)
  outputs["tokenizer/ids"] = np.asarray(tokenizer(TEXT))
  np.savez(os.path.join(out, "outputs.npz"), **outputs)
  with open(os.path.join(out, "versions.json"), "w") as f:
    json.dump(
        {"keras": keras.__version__, "keras_hub": keras_hub.__version__},
        f,
        indent=2,
    )
  for key, value in sorted(outputs.items()):
    print(key, value.shape)


if __name__ == "__main__":
  main()
