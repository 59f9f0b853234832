"""Hugging Face ALBERT <-> model directories, checked with transformers."""

import json
import os

import numpy as np
import pytest

from albert import model_dir as model_dir_lib
from albert.checkpoint_conversion import huggingface
from albert.checkpoint_conversion.errors import ConversionError
from albert.modeling.pretrainer import AlbertPretrainer
from tests.albert.pretrainer_outputs import pretrainer_outputs
from tests import helpers

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
safetensors_numpy = pytest.importorskip("safetensors.numpy")

TINY = dict(
    vocab_size=50,
    embedding_size=8,
    hidden_size=16,
    num_hidden_layers=3,
    num_attention_heads=4,
    intermediate_size=32,
    max_position_embeddings=16,
)
CASES = {
    "one_group": dict(),
    "groups_and_inner": dict(num_hidden_groups=2, inner_group_num=2),
    "v1_exact_gelu": dict(hidden_act="gelu", num_hidden_groups=3),
}


def _hf_model(seed=0, **overrides):
  """A random AlbertForPreTraining; every parameter perturbed, so that zero
  biases and unit LayerNorms cannot hide a misplaced tensor."""
  torch.manual_seed(seed)
  config = transformers.AlbertConfig(
      **{"hidden_act": "gelu_new", **TINY, **overrides}
  )
  model = transformers.AlbertForPreTraining(config).eval()
  with torch.no_grad():
    for p in model.parameters():
      p.add_(0.2 * torch.randn_like(p))
  return model


def _inputs(batch=3, length=7, seed=1):
  rng = np.random.default_rng(seed)
  word_ids = rng.integers(5, TINY["vocab_size"], size=(batch, length))
  lengths = np.array([length, length - 2, 3])[:batch]
  mask = (np.arange(length)[None] < lengths[:, None]).astype(np.int64)
  type_ids = ((np.arange(length)[None] >= 2) & (mask == 1)).astype(np.int64)
  positions = np.stack([rng.choice(n, size=2, replace=False) for n in lengths])
  return word_ids, mask, type_ids, positions


def _hf_outputs(model, word_ids, mask, type_ids, positions):
  args = dict(
      input_ids=torch.tensor(word_ids),
      attention_mask=torch.tensor(mask),
      token_type_ids=torch.tensor(type_ids),
  )
  with torch.no_grad():
    base = model.albert(**args)
    full = model(**args)
  mlm = np.take_along_axis(
      full.prediction_logits.numpy(), positions[..., None], axis=1
  )
  return [
      base.last_hidden_state.numpy(),
      base.pooler_output.numpy(),
      mlm,
      full.sop_logits.numpy(),
  ]


def _assert_close(got, want):
  for name, g, w in zip(("sequence", "pooled", "mlm", "sop"), got, want):
    assert g.shape == w.shape, name
    np.testing.assert_allclose(g, w, atol=1e-4, rtol=1e-4, err_msg=name)


@pytest.mark.parametrize("case", sorted(CASES))
def test_from_huggingface_matches_transformers(tmp_path, case):
  model = _hf_model(**CASES[case])
  model.save_pretrained(tmp_path / "hf")
  written = huggingface.from_huggingface(
      checkpoint=str(tmp_path / "hf"), output_dir=str(tmp_path / "ours")
  )
  assert written == str(tmp_path / "ours" / "ckpt-0")
  pretrainer, config = model_dir_lib.load_pretrainer(str(tmp_path / "ours"))
  assert config.hidden_act == (
      "gelu_exact" if case == "v1_exact_gelu" else "gelu"
  )
  inputs = _inputs()
  _assert_close(
      pretrainer_outputs(pretrainer, *inputs), _hf_outputs(model, *inputs)
  )


def _ours_in_transformers(tmp_path, config, seed):
  """A perturbed pretrainer of `config` (no zero biases, no unit
  LayerNorms), written as a model directory, converted and loaded in
  transformers: (pretrainer, transformers model)."""
  pretrainer = AlbertPretrainer.from_config_object(config)
  rng = np.random.default_rng(seed)
  for variable in pretrainer.weights:
    variable.assign_add(
        0.2 * rng.normal(size=variable.shape).astype(np.float32)
    )
  model_dir_lib.write_model_dir(str(tmp_path / "ours"), pretrainer, step=5)
  huggingface.to_huggingface(
      checkpoint=str(tmp_path / "ours"), output_dir=str(tmp_path / "hf")
  )
  model, info = transformers.AlbertForPreTraining.from_pretrained(
      str(tmp_path / "hf"), output_loading_info=True
  )
  assert not info["missing_keys"] and not info["unexpected_keys"], info
  inputs = _inputs()
  _assert_close(
      _hf_outputs(model.eval(), *inputs),
      pretrainer_outputs(pretrainer, *inputs),
  )
  return pretrainer, model


def test_to_huggingface_loads_in_transformers(tmp_path):
  config = helpers.tiny_config(
      vocab_size=50,
      num_layers=3,
      num_heads=4,
      max_position_embeddings=16,
      num_hidden_groups=2,
      inner_group_num=2,
  )
  _, model = _ours_in_transformers(tmp_path, config, seed=3)
  assert model.config.hidden_act == "gelu_new"
  assert model.config.num_hidden_groups == 2


def test_e_equals_h_goes_both_ways_through_an_identity_projection(tmp_path):
  # Ours, as the original, has no E -> H projection when E == H; transformers
  # always has one: it gets the identity, and only the identity comes back.
  config = helpers.tiny_config(
      vocab_size=50,
      embedding_size=16,
      num_layers=3,
      num_heads=4,
      max_position_embeddings=16,
  )
  pretrainer, model = _ours_in_transformers(tmp_path, config, seed=4)
  assert pretrainer.encoder.embeddings.embedding_projection is None
  projection = model.albert.encoder.embedding_hidden_mapping_in
  np.testing.assert_array_equal(projection.weight.detach().numpy(), np.eye(16))
  huggingface.from_huggingface(
      checkpoint=str(tmp_path / "hf"), output_dir=str(tmp_path / "back")
  )
  back, _ = model_dir_lib.load_pretrainer(str(tmp_path / "back"))
  for a, b in zip(back.weights, pretrainer.weights):
    np.testing.assert_array_equal(a.numpy(), b.numpy())
  # A trained (non-identity) projection has no place in ours: refused.
  with torch.no_grad():
    projection.weight.add_(0.1)
  model.save_pretrained(tmp_path / "hf2")
  with pytest.raises(ConversionError, match="is not the identity"):
    huggingface.from_huggingface(
        checkpoint=str(tmp_path / "hf2"), output_dir=str(tmp_path / "x")
    )
  assert not (tmp_path / "x").exists()


def test_masked_lm_checkpoint_without_pooler_or_sop_head(tmp_path):
  """transformers' AlbertForMaskedLM (the hub's albert-*-v2 architecture)
  has no sentence-order head, and in transformers 5 no pooler: those two
  start fresh, everything else matches transformers."""
  torch.manual_seed(5)
  config = transformers.AlbertConfig(hidden_act="gelu_new", **TINY)
  model = transformers.AlbertForMaskedLM(config).eval()
  with torch.no_grad():
    for p in model.parameters():
      p.add_(0.2 * torch.randn_like(p))
  model.save_pretrained(tmp_path / "hf")
  saved = safetensors_numpy.load_file(
      str(tmp_path / "hf" / "model.safetensors")
  )
  assert not any(k.startswith("sop_classifier") for k in saved)
  huggingface.from_huggingface(
      checkpoint=str(tmp_path / "hf"), output_dir=str(tmp_path / "ours")
  )
  pretrainer, _ = model_dir_lib.load_pretrainer(str(tmp_path / "ours"))
  word_ids, mask, type_ids, positions = _inputs()
  got = pretrainer_outputs(pretrainer, word_ids, mask, type_ids, positions)
  args = dict(
      input_ids=torch.tensor(word_ids),
      attention_mask=torch.tensor(mask),
      token_type_ids=torch.tensor(type_ids),
  )
  with torch.no_grad():
    sequence = model.albert(**args).last_hidden_state.numpy()
    logits = model(**args).logits.numpy()
  np.testing.assert_allclose(got[0], sequence, atol=1e-4, rtol=1e-4)
  np.testing.assert_allclose(
      got[2],
      np.take_along_axis(logits, positions[..., None], axis=1),
      atol=1e-4,
      rtol=1e-4,
  )


def test_group_rule_transformers_cannot_express_is_refused(tmp_path):
  config = helpers.tiny_config(
      vocab_size=50,
      num_layers=18,
      num_heads=4,
      max_position_embeddings=16,
      num_hidden_groups=14,
  )
  model_dir_lib.write_model_dir(
      str(tmp_path / "ours"),
      AlbertPretrainer.from_config_object(config),
      step=0,
  )
  with pytest.raises(
      ConversionError, match="transformers runs layer 9 with group 6"
  ):
    huggingface.to_huggingface(
        checkpoint=str(tmp_path / "ours"), output_dir=str(tmp_path / "hf")
    )
  assert not (tmp_path / "hf").exists()


def test_huggingface_round_trip_is_bit_exact(tmp_path):
  model = _hf_model(num_hidden_groups=2, inner_group_num=2)
  model.save_pretrained(tmp_path / "hf")
  huggingface.from_huggingface(
      checkpoint=str(tmp_path / "hf"), output_dir=str(tmp_path / "ours")
  )
  huggingface.to_huggingface(
      checkpoint=str(tmp_path / "ours" / "ckpt-0"),
      output_dir=str(tmp_path / "back"),
  )
  before = safetensors_numpy.load_file(
      str(tmp_path / "hf" / "model.safetensors")
  )
  after = safetensors_numpy.load_file(
      str(tmp_path / "back" / "model.safetensors")
  )
  assert sorted(after) == sorted(before)
  for name, value in before.items():
    assert after[name].dtype == value.dtype, name
    np.testing.assert_array_equal(after[name], value, err_msg=name)
  with open(tmp_path / "hf" / "config.json") as f:
    original = json.load(f)
  with open(tmp_path / "back" / "config.json") as f:
    written = json.load(f)
  for key, value in written.items():
    assert original[key] == value, key


def test_pytorch_model_bin_with_aliases_and_buffers(tmp_path):
  model = _hf_model(seed=4)
  folder = tmp_path / "bin"
  model.config.save_pretrained(folder)
  state = model.state_dict()  # holds the tied predictions.decoder.* aliases
  assert "predictions.decoder.weight" in state
  state["albert.embeddings.position_ids"] = torch.arange(16)[None]
  torch.save(state, folder / "pytorch_model.bin")
  huggingface.from_huggingface(
      checkpoint=str(folder), output_dir=str(tmp_path / "ours")
  )
  pretrainer, _ = model_dir_lib.load_pretrainer(str(tmp_path / "ours"))
  inputs = _inputs()
  _assert_close(
      pretrainer_outputs(pretrainer, *inputs), _hf_outputs(model, *inputs)
  )

  # An output layer that is not tied to the embeddings cannot be held.
  state["predictions.decoder.bias"] = state["predictions.decoder.bias"] + 1.0
  torch.save(state, folder / "pytorch_model.bin")
  with pytest.raises(
      ConversionError,
      match="predictions.decoder.bias differs from predictions.bias",
  ):
    huggingface.from_huggingface(
        checkpoint=str(folder), output_dir=str(tmp_path / "untied")
    )
  assert not (tmp_path / "untied").exists()


def _fails(tmp_path, folder, match):
  out = tmp_path / "out"
  with pytest.raises(ConversionError, match=match) as info:
    huggingface.from_huggingface(checkpoint=str(folder), output_dir=str(out))
  assert "\n" not in str(info.value)
  assert not out.exists()
  assert not [p for p in os.listdir(tmp_path) if p.startswith(".out")]


def test_bad_huggingface_inputs_are_named(tmp_path):
  model = _hf_model()
  good = tmp_path / "good"
  model.save_pretrained(good)
  tensors = safetensors_numpy.load_file(str(good / "model.safetensors"))
  with open(good / "config.json") as f:
    config = json.load(f)

  def variant(
      name, *, config_changes=None, tensors_changed=None, config_file=True
  ):
    folder = tmp_path / name
    folder.mkdir()
    if config_file:
      with open(folder / "config.json", "w") as f:
        json.dump({**config, **(config_changes or {})}, f)
    safetensors_numpy.save_file(
        tensors_changed or tensors,
        str(folder / "model.safetensors"),
        metadata={"format": "pt"},
    )
    return folder

  _fails(
      tmp_path,
      variant("no_config", config_file=False),
      r"no_config/config.json not found",
  )
  _fails(
      tmp_path,
      variant("bert", config_changes={"model_type": "bert"}),
      r"model_type='bert' is not supported",
  )
  _fails(
      tmp_path,
      variant("wider", config_changes={"intermediate_size": 64}),
      r"tensor albert.encoder.albert_layer_groups.0.albert_layers.0.ffn."
      r"weight has shape \[32, 16\] but the config needs \[64, 16\]",
  )
  _fails(
      tmp_path,
      variant(
          "extra",
          tensors_changed={
              **tensors,
              "classifier.weight": np.zeros((3, 16), np.float32),
          },
      ),
      r"unexpected tensors classifier.weight",
  )
  missing = {
      k: v
      for k, v in tensors.items()
      if k != "albert.embeddings.LayerNorm.bias"
  }
  _fails(
      tmp_path,
      variant("missing", tensors_changed=missing),
      r"missing tensors albert.embeddings.LayerNorm.bias",
  )
  # A head may be absent as a whole (see the AlbertForMaskedLM test), not
  # in part.
  half = {k: v for k, v in tensors.items() if k != "albert.pooler.bias"}
  _fails(
      tmp_path,
      variant("half_pooler", tensors_changed=half),
      r"missing tensors albert.pooler.bias",
  )
  _fails(
      tmp_path,
      variant(
          "groups",
          config_changes={"num_hidden_layers": 18, "num_hidden_groups": 14},
      ),
      r"transformers runs layer 9 with group 6, the original rule "
      r"int\(l / L \* G\) with group 7",
  )
  (tmp_path / "empty").mkdir()
  _fails(
      tmp_path,
      tmp_path / "empty",
      r"holds neither model.safetensors nor pytorch_model.bin",
  )
  _fails(tmp_path, tmp_path / "nowhere", r"is not a directory")
