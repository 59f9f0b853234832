"""Original TF1 checkpoints -> model directories -> original, against numpy."""

import json
import os

import gin
import numpy as np
import pytest
import tensorflow as tf

from albert import model_dir as model_dir_lib
from albert.checkpoint_conversion import original
from albert.checkpoint_conversion.errors import ConversionError
from albert.modeling.config import AlbertConfig
from official.optimization.optimizer_config import OptimizerConfig
from tests.albert.checkpoint_conversion import (
    original_checkpoint_reference as reference,
)
from tests.albert.pretrainer_outputs import pretrainer_outputs
from tests import helpers

SHAPES = {  # (num_hidden_groups, inner_group_num), L = 3
    "one_group": dict(),
    "groups_and_inner": dict(num_hidden_groups=2, inner_group_num=2),
    "three_groups": dict(num_hidden_groups=3, inner_group_num=1),
    # E == H: the original has no embedding_hidden_mapping_in, nor do we.
    "e_equals_h": dict(embedding_size=16),
}


def _write_original(tmp_path, config, **kwargs):
  """A released-style directory: model.ckpt-best.* + albert_config.json."""
  folder = tmp_path / "released"
  folder.mkdir()
  arrays = reference.random_arrays(config, **kwargs)
  reference.write_checkpoint(folder / "model.ckpt-best", arrays)
  with open(folder / "albert_config.json", "w") as f:
    json.dump(config, f)
  return (
      str(folder / "model.ckpt-best"),
      str(folder / "albert_config.json"),
      arrays,
  )


def _read(prefix):
  reader = tf.train.load_checkpoint(prefix)
  return {n: reader.get_tensor(n) for n in reader.get_variable_to_shape_map()}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_converted_model_matches_numpy_on_the_original_arrays(tmp_path, shape):
  config = reference.original_config(**SHAPES[shape])
  ckpt, config_path, arrays = _write_original(tmp_path, config, global_step=123)
  out_dir = str(tmp_path / "ours")
  written = original.from_original(
      checkpoint=ckpt, albert_config=config_path, output_dir=out_dir
  )
  assert written == os.path.join(out_dir, "ckpt-123")
  assert tf.train.latest_checkpoint(out_dir) == written

  pretrainer, loaded = model_dir_lib.load_pretrainer(out_dir)
  assert loaded == AlbertConfig.from_json_file(config_path)
  word_ids, mask, type_ids, positions = reference.inputs(config)
  got = pretrainer_outputs(pretrainer, word_ids, mask, type_ids, positions)
  want = reference.forward(arrays, config, word_ids, mask, type_ids, positions)
  for name, g, w in zip(("sequence", "pooled", "mlm", "sop"), got, want):
    np.testing.assert_allclose(g, w, atol=2e-5, err_msg=name)
  # Not trivially equal: the heads depend on the input.
  assert np.abs(want[3][0] - want[3][1]).max() > 1e-3


def test_model_directory_files(tmp_path):
  config = reference.original_config(num_hidden_groups=2)
  ckpt, config_path, _ = _write_original(tmp_path, config)
  out_dir = str(tmp_path / "ours")
  original.from_original(
      checkpoint=ckpt, albert_config=None, output_dir=out_dir  # beside it
  )
  expected = AlbertConfig.from_json_file(config_path)
  assert sorted(os.listdir(out_dir)) == sorted(
      [
          "checkpoint",
          "ckpt-0.index",
          "ckpt-0.data-00000-of-00001",
          "model_config.json",
          "albert_config.json",
          "operative_config.gin",
      ]
  )
  with open(os.path.join(out_dir, "model_config.json")) as f:
    assert json.load(f) == expected.to_dict()
  assert (
      AlbertConfig.from_json_file(os.path.join(out_dir, "albert_config.json"))
      == expected
  )
  gin.clear_config()
  try:
    gin.parse_config_file(os.path.join(out_dir, "operative_config.gin"))
    assert AlbertConfig() == expected
  finally:
    gin.clear_config()
  # Weights only, no optimizer state without --optimizer_slots.
  assert not any(
      n.startswith("optimizer/") for n in _read(os.path.join(out_dir, "ckpt-0"))
  )


def test_round_trip_is_bit_exact(tmp_path):
  config = reference.original_config(num_hidden_groups=2, inner_group_num=2)
  ckpt, config_path, arrays = _write_original(
      tmp_path, config, slots=True, global_step=77
  )
  ours = str(tmp_path / "ours")
  original.from_original(
      checkpoint=ckpt,
      albert_config=config_path,
      output_dir=ours,
      optimizer_slots=True,
  )
  back = original.to_original(
      checkpoint=ours, output_dir=str(tmp_path / "b"), optimizer_slots=True
  )
  assert back == str(tmp_path / "b" / "model.ckpt-77")
  got = _read(back)
  assert sorted(got) == sorted(arrays)
  for name, value in arrays.items():
    assert got[name].dtype == value.dtype, name
    np.testing.assert_array_equal(got[name], value, err_msg=name)
  assert tf.train.latest_checkpoint(str(tmp_path / "b")) == back
  with open(tmp_path / "b" / "albert_config.json") as f:
    written = json.load(f)
  assert {k: written[k] for k in written} == {
      k: config[k] for k in written
  }  # every key written is the original's

  # Without slots: the weights and global_step only.
  original.from_original(
      checkpoint=ckpt,
      albert_config=config_path,
      output_dir=str(tmp_path / "ours2"),
  )
  back = original.to_original(
      checkpoint=str(tmp_path / "ours2" / "ckpt-77"),
      output_dir=str(tmp_path / "c"),
  )
  got = _read(back)
  model_names = [n for n in arrays if not n.endswith(("adam_m", "adam_v"))]
  assert sorted(got) == sorted(model_names)
  for name in model_names:
    np.testing.assert_array_equal(got[name], arrays[name], err_msg=name)


def test_e_equals_h_round_trip_has_no_projection(tmp_path):
  config = reference.original_config(embedding_size=16)  # hidden_size 16
  ckpt, config_path, arrays = _write_original(tmp_path, config, global_step=5)
  assert not [n for n in arrays if "embedding_hidden_mapping_in" in n]
  ours = str(tmp_path / "ours")
  original.from_original(
      checkpoint=ckpt, albert_config=config_path, output_dir=ours
  )
  pretrainer, _ = model_dir_lib.load_pretrainer(ours)
  assert pretrainer.encoder.embeddings.embedding_projection is None
  back = original.to_original(checkpoint=ours, output_dir=str(tmp_path / "b"))
  got = _read(back)
  assert sorted(got) == sorted(arrays)
  for name, value in arrays.items():
    np.testing.assert_array_equal(got[name], value, err_msg=name)


def test_optimizer_slots_land_on_their_variables(tmp_path):
  """LAMB's m and v, restored the trainer's way, hold the original slots."""
  config = reference.original_config(num_hidden_groups=2, inner_group_num=2)
  ckpt, config_path, arrays = _write_original(
      tmp_path, config, slots=True, global_step=9
  )
  out_dir = str(tmp_path / "ours")
  original.from_original(
      checkpoint=ckpt,
      albert_config=config_path,
      output_dir=out_dir,
      optimizer_slots=True,
  )
  # As official/core/trainer.py builds and restores it.
  from albert.modeling.pretrainer import AlbertPretrainer

  model = AlbertPretrainer.from_config_object(
      model_dir_lib.read_model_config(out_dir)
  )
  optimizer = OptimizerConfig().build()
  optimizer.build(model.trainable_variables)
  tf.train.Checkpoint(model=model, optimizer=optimizer).restore(
      tf.train.latest_checkpoint(out_dir)
  ).assert_existing_objects_matched()
  assert int(optimizer.iterations.numpy()) == 9
  stack = model.encoder.transformer
  # group 1, inner 0 is weight set 1 * K + 0 = 2.
  p = "bert/encoder/transformer/group_1/inner_group_0/"
  cases = [
      (
          "bert/embeddings/word_embeddings",
          model.encoder.embeddings.word_embeddings,
          False,
      ),
      (
          p + "attention_1/self/key/kernel",
          stack.attention_blocks[2].key.kernel,
          False,
      ),
      (
          p + "ffn_1/intermediate/output/dense/bias",
          stack.ffn_blocks[2].output_dense.bias,
          False,
      ),
      (p + "LayerNorm_1/gamma", stack.ffn_blocks[2].layer_norm.gamma, False),
      (
          "cls/seq_relationship/output_weights",
          model.sentence_order.dense.kernel,
          True,
      ),
  ]
  for name, variable, transposed in cases:
    m, v = optimizer.slots(variable)
    for slot, suffix in ((m, "adam_m"), (v, "adam_v")):
      want = arrays[f"{name}/{suffix}"]
      np.testing.assert_array_equal(
          slot.numpy(),
          want.T if transposed else want,
          err_msg=f"{name}/{suffix}",
      )
    want = arrays[name]
    np.testing.assert_array_equal(
        variable.numpy(), want.T if transposed else want, err_msg=name
    )


def _assert_fails(tmp_path, match, **kwargs):
  out_dir = tmp_path / "out"
  with pytest.raises(ConversionError, match=match) as info:
    original.from_original(output_dir=str(out_dir), **kwargs)
  assert "\n" not in str(info.value)
  assert not out_dir.exists()
  assert not [p for p in os.listdir(tmp_path) if p.startswith(".out")]


def test_bad_original_inputs_are_named(tmp_path):
  config = reference.original_config()
  ckpt, config_path, arrays = _write_original(tmp_path, config, global_step=1)
  _assert_fails(
      tmp_path,
      r"model.ckpt-nope: no checkpoint there",
      checkpoint=str(tmp_path / "released" / "model.ckpt-nope"),
      albert_config=config_path,
  )
  _assert_fails(
      tmp_path,
      r"--albert_config=.*missing.json not found",
      checkpoint=ckpt,
      albert_config=str(tmp_path / "missing.json"),
  )
  # A config that does not belong to the checkpoint.
  other = tmp_path / "other.json"
  other.write_text(json.dumps(reference.original_config(hidden_size=32)))
  _assert_fails(
      tmp_path,
      r"tensor bert/encoder/embedding_hidden_mapping_in/"
      r"kernel has shape \[8, 16\] but the config needs \[8, 32\]",
      checkpoint=ckpt,
      albert_config=str(other),
  )
  two_groups = tmp_path / "two.json"
  two_groups.write_text(
      json.dumps(reference.original_config(num_hidden_groups=2))
  )
  _assert_fails(
      tmp_path,
      r"missing tensors bert/encoder/transformer/group_1/",
      checkpoint=ckpt,
      albert_config=str(two_groups),
  )
  # Unknown tensors (a fine-tuning head) and no slots for --optimizer_slots.
  extra = dict(arrays, **{"output_weights": np.zeros((3, 16), np.float32)})
  (tmp_path / "extra").mkdir()
  extra_ckpt = reference.write_checkpoint(
      tmp_path / "extra" / "model.ckpt-1", extra
  )
  _assert_fails(
      tmp_path,
      r"unexpected tensors output_weights",
      checkpoint=extra_ckpt,
      albert_config=config_path,
  )
  _assert_fails(
      tmp_path,
      r"holds no optimizer slots",
      checkpoint=ckpt,
      albert_config=config_path,
      optimizer_slots=True,
  )
  # Output directory that is in use.
  (tmp_path / "out").mkdir()
  (tmp_path / "out" / "keep.txt").write_text("x")
  with pytest.raises(
      ConversionError, match="already exists and is not an empty directory"
  ):
    original.from_original(
        checkpoint=ckpt,
        albert_config=config_path,
        output_dir=str(tmp_path / "out"),
    )
  assert os.listdir(tmp_path / "out") == ["keep.txt"]


def test_to_original_refuses_what_the_original_cannot_hold(tmp_path):
  from albert.modeling.pretrainer import AlbertPretrainer

  config = helpers.tiny_config(
      vocab_size=20,
      embedding_size=4,
      hidden_size=8,
      intermediate_size=16,
      max_position_embeddings=8,
  )
  for name, c in (("ffn", config.replace(sharing="ffn")), ("all", config)):
    model_dir_lib.write_model_dir(
        str(tmp_path / name), AlbertPretrainer.from_config_object(c)
    )
  out = str(tmp_path / "o")
  with pytest.raises(ConversionError, match="sharing='ffn' has no original"):
    original.to_original(checkpoint=str(tmp_path / "ffn"), output_dir=out)
  with pytest.raises(ConversionError, match="ckpt-0 holds no optimizer state"):
    original.to_original(
        checkpoint=str(tmp_path / "all"), output_dir=out, optimizer_slots=True
    )
  with pytest.raises(ConversionError, match="model_config.json not found"):
    original.to_original(checkpoint=str(tmp_path), output_dir=out)
  assert not (tmp_path / "o").exists()


def test_a_chinese_release_converts_with_its_vocabulary(tmp_path):
  # The original's albert_*_zh tarballs: its names, albert_config.json and
  # vocab_chinese.txt beside the checkpoint; the vocabulary comes along for
  # --vocab_file.
  config = reference.original_config(vocab_size=40)
  ckpt, config_path, arrays = _write_original(tmp_path, config)
  vocab = tmp_path / "released" / "vocab_chinese.txt"
  vocab.write_text(
      "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
      + "\n"
      + "\n".join(chr(0x4E00 + i) for i in range(35))
      + "\n",
      encoding="utf-8",
  )
  out = tmp_path / "ours"
  original.from_original(
      checkpoint=ckpt, albert_config=None, output_dir=str(out)
  )
  assert (out / "vocab_chinese.txt").read_bytes() == vocab.read_bytes()
  pretrainer, _ = model_dir_lib.load_pretrainer(str(out))
  np.testing.assert_array_equal(
      pretrainer.encoder.embeddings.word_embeddings.numpy(),
      arrays["bert/embeddings/word_embeddings"],
  )


def test_brightmart_layout_is_refused_in_one_line(tmp_path):
  # brightmart/albert_zh's own models project the words to H before adding
  # position and type tables of width H: another computation.
  folder = tmp_path / "brightmart"
  folder.mkdir()
  config = reference.original_config()
  arrays = {
      "bert/embeddings/word_embeddings": np.zeros([50, 8], np.float32),
      "bert/embeddings/word_embeddings_2": np.zeros([8, 16], np.float32),
      "bert/embeddings/position_embeddings": np.zeros([16, 16], np.float32),
      "bert/encoder/layer_shared/attention/self/query/kernel": np.zeros(
          [16, 16], np.float32
      ),
  }
  reference.write_checkpoint(folder / "model.ckpt-1", arrays)
  (folder / "albert_config.json").write_text(json.dumps(config))
  out = tmp_path / "out"
  with pytest.raises(ConversionError) as raised:
    original.from_original(
        checkpoint=str(folder / "model.ckpt-1"),
        albert_config=None,
        output_dir=str(out),
    )
  message = str(raised.value)
  assert "brightmart/albert_zh" in message and "\n" not in message
  assert "word_embeddings_2" in message and "--from=original" in message
  assert not out.exists()
