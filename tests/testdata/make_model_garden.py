r"""Makes tests/testdata/model_garden/ with the Model Garden's own code.

From the original TF1 checkpoint of tests/testdata/original_hub/ (made by
make_original_hub.py), with tf-models-official's own tools:
  encoder/ckpt-1      `tf2_albert_encoder_checkpoint_converter`, an
                      `AlbertEncoder` object-based checkpoint
  pretrainer/ckpt-1   the same converter, `--converted_model=pretrainer`
                      (`BertPretrainerV2` with its masked-LM head, saved as
                      `encoder`)
  pretrainer_items/ckpt-1  the same pretrainer saved as the Model Garden's
                      training saves it (`pretrainer.checkpoint_items`)
  tf_hub/             `export_tfhub_lib.export_model(with_mlm=True)` from
                      pretrainer_items: the TF Hub / Kaggle layout
                      (`sequence_output`, `pooled_output`, `encoder_outputs`,
                      `.mlm`), with the SentencePiece model in its assets
  unfactorized/ckpt-1 an `AlbertEncoder` with embedding_width == hidden_size
                      (no projection layer) and random weights
`outputs.npz` holds what the Model Garden computes for the inputs of
original_hub/inputs.npz: `encoder/*`, `pretrainer/mlm_logits`, `tf_hub/*`,
`tf_hub_mlm/mlm_logits`, `unfactorized/*`.

With --ours=PREFIX (a checkpoint our `convert_checkpoint --to=model_garden`
wrote of original_hub's model), it restores that checkpoint into the Model
Garden's `AlbertEncoder` with `assert_existing_objects_matched()` and
records the outputs as `ours/*` in ours.npz.

Not part of the test run: run it by hand in a side environment
(tf-models-official pins its own TensorFlow):

  python3.11 -m venv /tmp/mg
  /tmp/mg/bin/pip install tf-models-official==2.20.0
  /tmp/mg/bin/python tests/testdata/make_model_garden.py \
      --original=tests/testdata/original_hub --out=tests/testdata/model_garden
"""

import argparse
import json
import os
import shutil

import numpy as np
import tensorflow as tf
import tf_keras

from official.legacy.albert import configs
from official.modeling import tf_utils
from official.nlp.configs import encoders
from official.nlp.modeling import models
from official.nlp.modeling import networks
from official.nlp.tools import export_tfhub_lib
from official.nlp.tools import tf2_albert_encoder_checkpoint_converter as conv

SEED = 20261126


def _encoder(config, embedding_width=None):
  return networks.AlbertEncoder(
      vocab_size=config.vocab_size,
      embedding_width=embedding_width or config.embedding_size,
      hidden_size=config.hidden_size,
      num_layers=config.num_hidden_layers,
      num_attention_heads=config.num_attention_heads,
      intermediate_size=config.intermediate_size,
      max_sequence_length=config.max_position_embeddings,
      type_vocab_size=config.type_vocab_size,
      dropout_rate=0.0,
      attention_dropout_rate=0.0,
      dict_outputs=True,
  )


def _encoder_inputs(inputs):
  return dict(
      input_word_ids=tf.constant(inputs["input_ids"]),
      input_mask=tf.constant(inputs["input_mask"]),
      input_type_ids=tf.constant(inputs["segment_ids"]),
  )


def _record(outputs, prefix, result):
  for key in ("sequence_output", "pooled_output"):
    outputs[f"{prefix}/{key}"] = result[key].numpy()
  for i, layer in enumerate(result.get("encoder_outputs", [])):
    outputs[f"{prefix}/encoder_outputs_{i}"] = layer.numpy()


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--original", required=True)
  parser.add_argument("--out", required=True)
  parser.add_argument("--ours", default=None)
  args = parser.parse_args()
  original = os.path.abspath(args.original)
  out = os.path.abspath(args.out)
  config_file = os.path.join(original, "albert_config.json")
  config = configs.AlbertConfig.from_json_file(config_file)
  inputs = dict(np.load(os.path.join(original, "inputs.npz")))
  features = _encoder_inputs(inputs)

  if args.ours:
    encoder = _encoder(config)
    status = tf.train.Checkpoint(encoder=encoder).restore(args.ours)
    status.assert_existing_objects_matched()
    outputs = {}
    _record(outputs, "ours", encoder(features))
    np.savez(os.path.join(out, "ours.npz"), **outputs)
    print("restored with assert_existing_objects_matched():", args.ours)
    return

  shutil.rmtree(out, ignore_errors=True)
  os.makedirs(out)
  v1 = os.path.join(original, "model.ckpt-best")
  for kind in ("encoder", "pretrainer"):
    os.makedirs(os.path.join(out, kind))
    conv.convert_checkpoint(
        config,
        os.path.join(out, kind, "ckpt"),
        v1,
        checkpoint_model_name="encoder",
        converted_model=kind,
    )
  outputs = {}

  encoder = _encoder(config)
  tf.train.Checkpoint(encoder=encoder).restore(
      os.path.join(out, "encoder", "ckpt-1")
  ).assert_existing_objects_matched()
  _record(outputs, "encoder", encoder(features))

  pretrainer = models.BertPretrainerV2(
      encoder_network=_encoder(config),
      mlm_activation=tf_utils.get_activation(config.hidden_act),
  )
  pretrainer_inputs = dict(
      features, masked_lm_positions=tf.constant(inputs["mlm_positions"])
  )
  pretrainer(pretrainer_inputs)
  # The converter saves the pretrainer itself as `encoder` (its
  # checkpoint_model_name); training saves `pretrainer.checkpoint_items`,
  # which is what the TF Hub export reads.
  tf.train.Checkpoint(
      encoder=pretrainer, masked_lm=pretrainer.masked_lm
  ).restore(
      os.path.join(out, "pretrainer", "ckpt-1")
  ).assert_existing_objects_matched()
  result = pretrainer(pretrainer_inputs)
  outputs["pretrainer/mlm_logits"] = result["mlm_logits"].numpy()
  items = tf.train.Checkpoint(**pretrainer.checkpoint_items).save(
      os.path.join(out, "pretrainer_items", "ckpt")
  )

  encoder_config = encoders.EncoderConfig(
      type="albert",
      albert=encoders.AlbertEncoderConfig(
          vocab_size=config.vocab_size,
          embedding_width=config.embedding_size,
          hidden_size=config.hidden_size,
          num_layers=config.num_hidden_layers,
          num_attention_heads=config.num_attention_heads,
          hidden_activation=config.hidden_act,
          intermediate_size=config.intermediate_size,
          max_position_embeddings=config.max_position_embeddings,
          type_vocab_size=config.type_vocab_size,
      ),
  )
  hub_dir = os.path.join(out, "tf_hub")
  export_tfhub_lib.export_model(
      hub_dir,
      encoder_config=encoder_config,
      model_checkpoint_path=items,
      with_mlm=True,
      sp_model_file=os.path.join(
          original, "hub_module", "assets", "30k-clean.model"
      ),
  )
  hub = tf.saved_model.load(hub_dir)
  _record(outputs, "tf_hub", hub(features, training=False))
  mlm = hub.mlm(
      dict(features, masked_lm_positions=tf.constant(inputs["mlm_positions"])),
      training=False,
  )
  outputs["tf_hub_mlm/mlm_logits"] = mlm["mlm_logits"].numpy()

  # E == H: the encoder has no embedding_projection layer, and the layers
  # after it are numbered one lower in the checkpoint.
  tf.keras.utils.set_random_seed(SEED)
  unfactorized = _encoder(config, embedding_width=config.hidden_size)
  unfactorized(features)
  rng = np.random.RandomState(SEED)
  for v in unfactorized.weights:
    value = rng.normal(0.0, 0.5, v.shape).astype(np.float32)
    v.assign(1.0 + 0.2 * value if "gamma" in v.name else value)
  tf.train.Checkpoint(encoder=unfactorized).save(
      os.path.join(out, "unfactorized", "ckpt")
  )
  _record(outputs, "unfactorized", unfactorized(features))

  np.savez(os.path.join(out, "outputs.npz"), **outputs)
  import official  # pylint: disable=import-outside-toplevel

  with open(os.path.join(out, "versions.json"), "w") as f:
    json.dump(
        {
            "tensorflow": tf.__version__,
            "tf_keras": tf_keras.__version__,
            "tf_models_official": getattr(official, "__version__", "2.20.0"),
        },
        f,
        indent=2,
    )
  for key, value in sorted(outputs.items()):
    print(key, value.shape)


if __name__ == "__main__":
  main()
