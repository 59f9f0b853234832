r"""Makes tests/testdata/original_hub/ with the original release's own code.

A tiny random ALBERT built by the original's `modeling.AlbertModel` and the
heads of its `export_to_tfhub.py` (`get_mlm_logits`, `get_sop_log_probs`),
saved as a TF1 checkpoint (`model.ckpt-best`, as released) and exported as a
TF1 Hub module by that script's own `module_fn` (signatures `tokens`, `sop`,
`mlm`, `tokenization_info`). `outputs.npz` holds what the module computes
for the fixed inputs in `inputs.npz`; the tests compare ours with it.

Not part of the test run: run it by hand in a side environment, with a
checkout of the original (its code is not ours to copy):

  git clone https://github.com/google-research/albert /tmp/albert_original
  python3.11 -m venv /tmp/tf1hub
  /tmp/tf1hub/bin/pip install 'tensorflow==2.15.*' 'tensorflow_hub==0.15.0' \
      tf_slim sentencepiece six
  /tmp/tf1hub/bin/python tests/testdata/make_original_hub.py \
      --albert_repo=/tmp/albert_original --out=tests/testdata/original_hub

TensorFlow 2.15 and tensorflow_hub 0.15 are the last releases that still
create TF1 Hub modules; the original imports `tensorflow.contrib.layers`,
whose `layer_norm` lives on in tf_slim (the one shim below).
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import types

import numpy as np
import sentencepiece as spm
import tensorflow.compat.v1 as tf
import tf_slim

# The fixture's model: every dimension different, two layers applied from
# one shared block, E != H (the factorized embedding).
CONFIG = {
    "vocab_size": 40,
    "embedding_size": 8,
    "hidden_size": 12,
    "num_hidden_layers": 2,
    "num_attention_heads": 3,
    "intermediate_size": 20,
    "num_hidden_groups": 1,
    "inner_group_num": 1,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.0,
    "attention_probs_dropout_prob": 0.0,
    "max_position_embeddings": 16,
    "type_vocab_size": 2,
    "initializer_range": 0.02,
    "down_scale_factor": 1,
}
SEED = 20261125


def _sentencepiece(directory):
  """A tiny SentencePiece model with ALBERT's special ids (pad 0, unk 1,
  [CLS] 2, [SEP] 3, [MASK] 4), named as the original's export expects."""
  words = (
      "the a of to and in is it that was for on are with as he be by at "
      "from his an have which or one had not but were this they her all "
      "she there would their we him been has when who will more no if out"
  ).split()
  rng = np.random.RandomState(SEED)
  lines = [" ".join(rng.choice(words, 8)) for _ in range(200)]
  spm.SentencePieceTrainer.train(
      sentence_iterator=iter(lines),
      model_prefix=os.path.join(directory, "30k-clean"),
      vocab_size=CONFIG["vocab_size"],
      model_type="unigram",
      pad_id=0,
      unk_id=1,
      bos_id=-1,
      eos_id=-1,
      control_symbols=["[CLS]", "[SEP]", "[MASK]"],
      normalization_rule_name="identity",  # no 240 KB NFKC table
      num_threads=1,
  )


def _inputs():
  """Two examples of 12 tokens: a padded single segment and a pair."""
  rng = np.random.RandomState(SEED + 1)
  ids = rng.randint(5, CONFIG["vocab_size"], size=(2, 12)).astype(np.int32)
  ids[:, 0] = 2
  mask = np.ones_like(ids)
  mask[0, 9:] = 0
  ids[0, 9:] = 0
  types_ = np.zeros_like(ids)
  types_[1, 6:] = 1
  positions = np.array([[1, 4, 7], [2, 6, 11]], np.int32)
  return dict(
      input_ids=ids,
      input_mask=mask,
      segment_ids=types_,
      mlm_positions=positions,
  )


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--albert_repo", required=True)
  parser.add_argument("--out", required=True)
  args = parser.parse_args()

  # The original is imported as the package `albert`, as its scripts do.
  root = tempfile.mkdtemp()
  os.symlink(os.path.abspath(args.albert_repo), os.path.join(root, "albert"))
  sys.path.insert(0, root)
  contrib = types.ModuleType("tensorflow.contrib")
  contrib.layers = tf_slim.layers
  sys.modules["tensorflow.contrib"] = contrib
  from albert import export_to_tfhub  # pylint: disable=import-outside-toplevel
  from albert import modeling  # pylint: disable=import-outside-toplevel

  tf.disable_v2_behavior()
  out = os.path.abspath(args.out)
  shutil.rmtree(out, ignore_errors=True)
  os.makedirs(out)
  with open(os.path.join(out, "albert_config.json"), "w") as f:
    json.dump(CONFIG, f, indent=2)
  _sentencepiece(out)

  # 1. The TF1 checkpoint: the graph of the original's export, random
  # weights of a visible scale (the initialiser's 0.02 would hide mix-ups).
  config = modeling.AlbertConfig.from_dict(CONFIG)
  rng = np.random.RandomState(SEED)
  with tf.Graph().as_default():
    ids, mask, segments, positions = (
        tf.placeholder(tf.int32, [None, None]) for _ in range(4)
    )
    model = modeling.AlbertModel(
        config=config,
        is_training=False,
        input_ids=ids,
        input_mask=mask,
        token_type_ids=segments,
    )
    export_to_tfhub.get_mlm_logits(model, config, positions)
    export_to_tfhub.get_sop_log_probs(model, config)
    variables = tf.global_variables()
    with tf.Session() as session:
      for v in variables:
        shape = v.shape.as_list()
        value = rng.normal(0.0, 0.5, shape).astype(np.float32)
        if v.op.name.endswith("gamma"):
          value = 1.0 + 0.2 * value
        v.load(value, session)
      tf.train.Saver(variables).save(
          session,
          os.path.join(out, "model.ckpt-best"),
          write_meta_graph=False,
          write_state=False,
      )
  print(len(variables), "variables:", sorted(v.op.name for v in variables))

  # 2. The TF1 Hub module, by the original's own export.
  export_to_tfhub.FLAGS(
      [
          "export_to_tfhub",
          f"--albert_directory={out}",
          "--checkpoint_name=model.ckpt-best",
          f"--export_path={os.path.join(out, 'hub_module')}",
      ]
  )
  export_to_tfhub.main(None)
  for name in ("30k-clean.model", "30k-clean.vocab"):  # copies in the module
    os.remove(os.path.join(out, name))

  # 3. What the module computes, by tensorflow_hub's own TF1 loader.
  import tensorflow_hub as hub  # pylint: disable=import-outside-toplevel

  inputs = _inputs()
  np.savez(os.path.join(out, "inputs.npz"), **inputs)
  tokens = {k: inputs[k] for k in ("input_ids", "input_mask", "segment_ids")}
  with tf.Graph().as_default():
    module = hub.Module(os.path.join(out, "hub_module"))
    fetches = {}
    for signature, feed in (
        ("tokens", tokens),
        ("sop", tokens),
        ("mlm", inputs),
    ):
      result = module(feed, signature=signature, as_dict=True)
      for key, value in result.items():
        fetches[f"{signature}/{key}"] = value
    with tf.Session() as session:
      session.run(tf.global_variables_initializer())
      outputs = session.run(fetches)
  np.savez(os.path.join(out, "outputs.npz"), **outputs)
  with open(os.path.join(out, "versions.json"), "w") as f:
    json.dump(
        {
            "tensorflow": tf.__version__,
            "tensorflow_hub": hub.__version__,
            "albert_repo_files": ["modeling.py", "export_to_tfhub.py"],
        },
        f,
        indent=2,
    )
  for key, value in sorted(outputs.items()):
    print(key, value.shape)


if __name__ == "__main__":
  main()
