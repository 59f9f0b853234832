"""SavedModel export: signatures, fresh-process loading, tokenizer parity."""

import json
import os
import sys

import numpy as np
import pytest
import sentencepiece as spm
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from albert.modeling.encoder import AlbertEncoder
from albert.modeling.pretrainer import AlbertPretrainer
from albert.serving.hub_encoder_module import HubEncoderModule
from albert.serving.preprocessor import AlbertPreprocessor
from tests.albert.serving import hostile
from tests.albert.serving.conftest import SEQ
from tests import helpers

# Every test here needs the exported SavedModels (serving/conftest.py).
pytestmark = pytest.mark.slow

TEXTS = [
    "The function returns a list.",
    "Café déjà vu — naïve Ångström!",
    "ΟΔΟΣ ΣΑΣ and İstanbul",
    "数字 123 and ١٢٣, 1,000 items, x4,",
    "  tabs\tand\nnewlines\u3000here ",
    "",
    "ﬁnance ½ a¨b",
    "Thai: กั้น; Hindi: हिन्दी; Korean: 한국어",
]


def test_layout_and_no_leftovers(export_dir):
  assert sorted(os.listdir(export_dir)) == [
      "encoder",
      "preprocessing",
      "serving",
  ]
  assert os.path.exists(export_dir / "serving" / "assets" / "spm.model")
  assert os.path.exists(export_dir / "preprocessing" / "assets" / "spm.model")
  assert not [p for p in os.listdir(export_dir.parent) if ".tmp" in p]


@pytest.mark.parametrize("name", ["encoder", "preprocessing", "serving"])
def test_saved_models_hold_no_keras_objects(export_dir, name):
  """The modules hold the model out of the object graph (export_base), so
  tf_keras neither traces every layer at export nor revives it at load."""
  meta = saved_model_pb2.SavedModel()
  with open(export_dir / name / "saved_model.pb", "rb") as f:
    meta.ParseFromString(f.read())
  (graph,) = meta.meta_graphs
  identifiers = {
      node.user_object.identifier
      for node in graph.object_graph_def.nodes
      if node.WhichOneof("kind") == "user_object"
  }
  assert not [i for i in identifiers if "keras" in i], identifiers
  assert not os.path.exists(export_dir / name / "keras_metadata.pb")


def test_hostile_requests_are_answered(export_dir):
  """Empty, over-long, not UTF-8 and zero-sized batches to every raw-text
  signature, in a fresh process (tests/albert/serving/hostile.py)."""
  hostile.assert_answers_everything(
      export_dir / "serving",
      ["embed", "fill_mask", "sentence_order", "serving_default", "similarity"],
  )
  hostile.assert_answers_everything(
      export_dir / "preprocessing", ["pair", "serving_default"]
  )


def test_an_unbuilt_model_is_refused_before_saving():
  # Its heads' variables would only appear while `save` traces, unsaved.
  config = helpers.tiny_config(vocab_size=100, max_position_embeddings=16)
  pretrainer = AlbertPretrainer(AlbertEncoder.from_config_object(config))
  with pytest.raises(ValueError, match="is not built: call it once"):
    HubEncoderModule(pretrainer)


FRESH = r"""
import json, sys
import numpy as np
import tensorflow as tf
import tensorflow_text  # registers the SentencePiece ops
root, texts, seq = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
out = {}
enc = tf.saved_model.load(root + "/encoder")
pre = tf.saved_model.load(root + "/preprocessing")
srv = tf.saved_model.load(root + "/serving")
modules = (("encoder", enc), ("preprocessing", pre), ("serving", srv))
out["signatures"] = {k: sorted(m.signatures) for k, m in modules}
inputs = pre.signatures["serving_default"](text=tf.constant(texts))
out["inputs"] = {k: v.numpy().tolist() for k, v in inputs.items()}
pair = pre.signatures["pair"](first=tf.constant(["a b c"]),
                              second=tf.constant(["d"]))
out["pair"] = {k: v.numpy().tolist() for k, v in pair.items()}
out["tokenize_text"] = pre.tokenize_text(tf.constant(texts)).to_list()
out["tokenize_words"] = pre.tokenize(tf.constant(texts)).to_list()
encoded = enc.signatures["serving_default"](**inputs)
out["encoder"] = {k: v.numpy().tolist() for k, v in encoded.items()}
positions = tf.constant([[1, 2]] * len(texts))
mlm = enc.signatures["mlm"](masked_lm_positions=positions, **inputs)
out["mlm_logits"] = mlm["mlm_logits"].numpy().tolist()
# The TF Hub callables: the encoder and its `mlm` on a dict of inputs.
called = enc(dict(inputs), training=False)
out["called_blocks"] = [t.numpy().tolist() for t in called["encoder_outputs"]]
out["called_pooled"] = called["pooled_output"].numpy().tolist()
mlm_called = enc.mlm(dict(inputs, masked_lm_positions=positions))
out["mlm_called"] = mlm_called["mlm_logits"].numpy().tolist()
out["mlm_called_blocks"] = len(mlm_called["encoder_outputs"])
out["special"] = {
    k: int(v) for k, v in pre.tokenize.get_special_tokens_dict().items()}
original = {"input_ids": inputs["input_word_ids"],
            "input_mask": inputs["input_mask"],
            "segment_ids": inputs["input_type_ids"]}
for name in ("tokens", "sop"):
  outputs = enc.signatures[name](**original)
  out[name] = {k: v.numpy().tolist() for k, v in outputs.items()}
info = enc.signatures["tokenization_info"]()
out["vocab_file"] = info["vocab_file"].numpy().decode()
out["do_lower_case"] = bool(info["do_lower_case"].numpy())
served = srv.signatures["serving_default"](text=tf.constant(texts))
out["served_pooled"] = served["pooled_output"].numpy().tolist()
long = srv.signatures["serving_default"](text=tf.constant(["word " * 500]))
out["long_mask_sum"] = int(long["input_mask"].numpy().sum())
fill = srv.signatures["fill_mask"](
    text=tf.constant(["the [MASK] of the [MASK].", "none"]))
utf8 = np.vectorize(lambda b: b.decode("utf-8"), otypes=[str])
out["fill"] = {k: (utf8(v.numpy()).tolist() if v.dtype == tf.string
                   else v.numpy().tolist()) for k, v in fill.items()}
order = srv.signatures["sentence_order"](first=tf.constant(["a", ""]),
                                         second=tf.constant(["b", ""]))
out["order"] = {k: v.numpy().tolist() for k, v in order.items()}
def error_of(call):
  try:
    call()
    return None
  except tf.errors.InvalidArgumentError as e:
    return e.message
out["pair_batch_error"] = error_of(lambda: pre.signatures["pair"](
    first=tf.constant(["a", "b"]), second=tf.constant(["c"])))
out["order_batch_error"] = error_of(lambda: srv.signatures["sentence_order"](
    first=tf.constant(["a"]), second=tf.constant(["c", "d", "e"])))
too_long = tf.ones([1, 65], tf.int32)
out["too_long_error"] = error_of(lambda: enc.signatures["serving_default"](
    input_word_ids=too_long, input_mask=too_long, input_type_ids=0 * too_long))
try:
  srv.signatures["serving_default"](text=tf.constant([1, 2]))
  out["rejects_ints"] = False
except (tf.errors.InvalidArgumentError, TypeError, ValueError):
  out["rejects_ints"] = True
out["albert_imported"] = any(
    m == "albert" or m.startswith(("albert.", "official")) for m in sys.modules)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def fresh(export_dir):
  run = helpers.run(
      [
          "-c",
          FRESH,
          str(export_dir),
          json.dumps(TEXTS),
          str(SEQ),
      ],
      cwd="/",
      env=dict(helpers.ENV, PYTHONPATH=""),
      timeout=600,
  )
  assert run.returncode == 0, run.stderr[-3000:]
  return json.loads(run.stdout.strip().splitlines()[-1])


def _python_pack(tokenizer, texts, seq):
  """[CLS] tokens [SEP], truncated and padded: the Python reference."""
  ids = []
  for text in texts:
    row = (
        [tokenizer.cls_id]
        + tokenizer.tokenize(text)[: seq - 2]
        + [tokenizer.sep_id]
    )
    ids.append(row + [0] * (seq - len(row)))
  return np.array(ids)


def test_fresh_process_signatures_and_no_package_import(fresh):
  assert fresh["signatures"] == {
      "encoder": [
          "mlm",
          "serving_default",
          "sop",
          "tokenization_info",
          "tokens",
      ],
      "preprocessing": ["pair", "serving_default"],
      "serving": [
          "embed",
          "fill_mask",
          "sentence_order",
          "serving_default",
          "similarity",
      ],
  }
  assert fresh["albert_imported"] is False
  assert fresh["rejects_ints"] is True


def test_unequal_batches_and_over_long_ids_are_rejected_with_a_message(fresh):
  # Two text inputs of different batch sizes would abort the process in
  # TF-Text (or silently drop examples) and ids longer than the position
  # table fail on an unexplained broadcast, without the checks.
  assert (
      "first and second must hold the same number of examples"
      in fresh["pair_batch_error"]
  )
  assert (
      "first and second must hold the same number of examples"
      in fresh["order_batch_error"]
  )
  assert (
      "sequence length exceeds max_position_embeddings=64"
      in fresh["too_long_error"]
  )


def test_preprocessing_equals_the_python_tokenizer(fresh, tokenizer):
  expected = _python_pack(tokenizer, TEXTS, SEQ)
  np.testing.assert_array_equal(fresh["inputs"]["input_word_ids"], expected)
  np.testing.assert_array_equal(fresh["inputs"]["input_mask"], expected != 0)
  # The loaded functions: tokenize_text's flat pieces are tokenize's words.
  assert fresh["tokenize_text"] == [tokenizer.tokenize(t) for t in TEXTS]
  assert fresh["tokenize_text"] == [
      [piece for word in words for piece in word]
      for words in fresh["tokenize_words"]
  ]
  # Empty text still packs as [CLS] [SEP].
  assert fresh["inputs"]["input_word_ids"][TEXTS.index("")][:3] == [2, 3, 0]
  # A pair: [CLS] a b c [SEP] d [SEP] with segment ids 0... then 1...
  types = fresh["pair"]["input_type_ids"][0]
  words = fresh["pair"]["input_word_ids"][0]
  first_sep = words.index(3)
  assert types[: first_sep + 1] == [0] * (first_sep + 1)
  assert types[first_sep + 1] == 1 and words[words.index(3, first_sep + 1)] == 3
  assert fresh["long_mask_sum"] == SEQ  # truncated to seq_length


def test_encoder_outputs_equal_the_keras_model(fresh, model_dir):
  _, pretrainer = model_dir
  inputs = {k: tf.constant(v) for k, v in fresh["inputs"].items()}
  want = pretrainer.encoder(inputs)
  np.testing.assert_allclose(
      fresh["encoder"]["pooled_output"],
      want["pooled_output"].numpy(),
      atol=1e-5,
  )
  np.testing.assert_allclose(
      fresh["encoder"]["default"], want["pooled_output"].numpy(), atol=1e-5
  )
  np.testing.assert_allclose(
      fresh["encoder"]["sequence_output"],
      want["sequence_output"].numpy(),
      atol=1e-5,
  )
  stacked = np.array(fresh["encoder"]["stacked_encoder_outputs"])
  assert stacked.shape == (2, len(TEXTS), SEQ, 32)
  assert "encoder_outputs" not in fresh["encoder"]  # a list: not a signature's
  # Called as TF Hub calls it: encoder_outputs is a list, one per block.
  assert len(fresh["called_blocks"]) == 2
  for block, got, stacked_block in zip(
      want["encoder_outputs"], fresh["called_blocks"], stacked
  ):
    np.testing.assert_allclose(got, block.numpy(), atol=1e-5)
    np.testing.assert_allclose(stacked_block, block.numpy(), atol=1e-5)
  np.testing.assert_allclose(
      fresh["called_pooled"], want["pooled_output"].numpy(), atol=1e-5
  )
  np.testing.assert_allclose(
      fresh["served_pooled"], want["pooled_output"].numpy(), atol=1e-5
  )
  inputs["masked_lm_positions"] = tf.constant([[1, 2]] * len(TEXTS))
  want_mlm = pretrainer(inputs)["mlm_logits"].numpy()
  np.testing.assert_allclose(fresh["mlm_logits"], want_mlm, atol=1e-4)
  np.testing.assert_allclose(fresh["mlm_called"], want_mlm, atol=1e-4)
  assert fresh["mlm_called_blocks"] == 2


def test_special_tokens_dict_names_the_sentencepiece_ids(fresh, spm_model):
  processor = spm.SentencePieceProcessor(model_file=str(spm_model))
  assert fresh["special"] == {
      "vocab_size": processor.get_piece_size(),
      "start_of_sequence_id": processor.piece_to_id("[CLS]"),
      "end_of_segment_id": processor.piece_to_id("[SEP]"),
      "padding_id": processor.piece_to_id("<pad>"),
      "mask_id": processor.piece_to_id("[MASK]"),
  }


def test_original_hub_signatures(fresh, model_dir, export_dir, spm_model):
  _, pretrainer = model_dir
  inputs = {k: tf.constant(v) for k, v in fresh["inputs"].items()}
  assert sorted(fresh["tokens"]) == ["pooled_output", "sequence_output"]
  for name in ("pooled_output", "sequence_output"):
    np.testing.assert_allclose(
        fresh["tokens"][name], fresh["encoder"][name], atol=1e-6
    )
    np.testing.assert_allclose(
        fresh["sop"][name], fresh["encoder"][name], atol=1e-6
    )
  inputs["masked_lm_positions"] = tf.constant([[1]] * len(TEXTS))
  logits = (
      pretrainer(inputs)["sentence_order_logits"].numpy().astype(np.float64)
  )
  log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
  np.testing.assert_allclose(
      fresh["sop"]["sop_log_probs"], log_probs, atol=1e-5
  )
  # tokenization_info points at the SentencePiece model inside the SavedModel.
  assert fresh["vocab_file"] == str(
      export_dir / "encoder" / "assets" / "spm.model"
  )
  with open(fresh["vocab_file"], "rb") as got, open(spm_model, "rb") as want:
    assert got.read() == want.read()
  assert fresh["do_lower_case"] is True


def test_fill_mask_and_sentence_order(fresh, model_dir, spm_model):
  _, pretrainer = model_dir
  fill = fresh["fill"]
  assert np.array(fill["top_k_ids"]).shape == (2, 2, 3)
  assert (
      fill["mask_positions"][1] == [-1, -1]
      and fill["top_k_ids"][1][0] == [-1] * 3
  )
  # The reference: the Keras model at the same positions.
  pre = AlbertPreprocessor(spm_model, SEQ)
  inputs = pre.pack(
      [pre.tokenize_with_masks(tf.constant(["the [MASK] of the [MASK]."]))]
  )
  positions = np.where(inputs["input_word_ids"].numpy()[0] == pre.mask_id)[0]
  assert fill["mask_positions"][0] == positions.tolist()
  inputs["masked_lm_positions"] = tf.constant([positions])
  probs = tf.nn.softmax(pretrainer(inputs)["mlm_logits"]).numpy()[0]
  for m in range(2):
    top = np.argsort(-probs[m])[:3]
    assert fill["top_k_ids"][0][m] == top.tolist()
    np.testing.assert_allclose(
        fill["top_k_scores"][0][m], probs[m][top], atol=1e-5
    )
  assert all(isinstance(t, str) and t for t in fill["top_k_tokens"][0][0])
  for p in fresh["order"]["in_order_probability"]:
    assert 0.0 < p < 1.0
  logits = np.array(fresh["order"]["sentence_order_logits"])
  np.testing.assert_allclose(
      fresh["order"]["in_order_probability"],
      np.exp(logits[:, 0]) / np.exp(logits).sum(1),
      atol=1e-6,
  )


def test_saved_model_cli_lists_the_signatures(export_dir):
  cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
  run = helpers.run(
      [cli, "show", "--all", "--dir", str(export_dir / "serving")],
      timeout=300,
  )
  assert run.returncode == 0, run.stderr[-2000:]
  for name in ("serving_default", "fill_mask", "sentence_order", "embed"):
    assert f"signature_def['{name}']" in run.stdout


def test_normalisation_and_tokens_equal_python_on_varied_text(
    spm_model, tokenizer
):
  from albert.text.tokenization import preprocess_text

  pre = AlbertPreprocessor(spm_model, SEQ)
  texts = TEXTS + [
      "ÀÉÎÕÜ ÇÑ",
      "x\u00a0y\u2009z\u200az",
      "1,2,3, 10,000,000",
      "ΣΊΣΥΦΟΣ σοφός",
      "Ǆemal ǅ",
      "straße STRASSE",
      "e\u0301",
      "under_score-dash",
      "emoji 😀 ok",
  ]
  normalized = pre.normalize(tf.constant(texts)).numpy()
  tokens = pre.tokenize(tf.constant(texts)).to_list()
  for text, norm, toks in zip(texts, normalized, tokens):
    assert norm.decode() == preprocess_text(text, lower=True), repr(text)
    assert toks == tokenizer.tokenize(text), repr(text)


def test_bad_export_arguments_are_one_line(
    model_dir, spm_model, tmp_path, export_dir
):
  def run(*args):
    return helpers.run(["-m", "albert.run_export", *args], timeout=300)

  result = run(
      f"--model_dir={model_dir[0]}",
      f"--spm_model_file={spm_model}",
      f"--export_dir={export_dir}",
  )
  assert result.returncode != 0
  assert "exists: choose a new one" in result.stderr.strip().splitlines()[-1]
  result = run(
      f"--model_dir={tmp_path}",
      f"--spm_model_file={spm_model}",
      f"--export_dir={tmp_path}/out",
  )
  assert result.returncode != 0
  assert "model_config.json not found" in result.stderr.strip().splitlines()[-1]
  assert not os.path.exists(tmp_path / "out")


def test_compare_serving_precision_reports_against_the_bars(
    model_dir, spm_model, tmp_path
):
  text = tmp_path / "held_out.txt"
  text.write_text(
      "\n".join(
          [
              "short line",
              "The function returns a new list of the items it was given.",
              "It opens the file, reads every line and closes it again.",
              (
                  "Each call to the iterator yields the next value of the "
                  "sequence."
              ),
          ]
      )
  )
  run = helpers.run(
      [
          "tools/compare_serving_precision.py",
          f"--model_dir={model_dir[0]}",
          f"--checkpoint={model_dir[0]}/ckpt-1",
          f"--spm_model_file={spm_model}",
          f"--text_file={text}",
          f"--seq_length={SEQ}",
          "--json",
      ],
      timeout=600,
  )
  report = json.loads(run.stdout.strip().splitlines()[-1])
  assert report["sentences"] == 3  # the 2-word line is skipped
  assert 0 <= report["top1_agreement"] <= 1
  assert 0.99 < report["min_cosine"] <= report["mean_cosine"] <= 1 + 1e-9
  # The bfloat16 export computed in bfloat16 behind unchanged float32
  # signatures (the same export as `run_export --precision=bfloat16`).
  assert report["bfloat16_output_dtype"] == "float32"
  assert report["max_abs_diff"] > 0
  passed = report["top1_agreement"] >= 0.98 and report["min_cosine"] >= 0.999
  assert report["passed"] == passed
  assert run.returncode == (0 if passed else 1), run.stderr[-2000:]
  if not passed:
    assert run.stderr.strip().splitlines()[-1] == (
        "compare_serving_precision: bfloat16 serving misses the bar"
    )


def test_query_saved_model_answers_and_refuses_in_one_line(export_dir):
  serving = f"--saved_model={export_dir}/serving"

  def query(*flags):
    return helpers.run([helpers.tool("query_saved_model"), *flags])

  # One process answers what it can of three texts: a [MASK] past the
  # packed length is cut away (said, not silently empty) and a text without
  # one is skipped with a warning; the rest is answered.
  run = query(
      serving,
      "--fill_mask=the [MASK] returns a list.",
      "--fill_mask=" + "word " * (2 * SEQ) + "[MASK].",
      "--fill_mask=no mask here",
      "--first=It opens the file.",
      "--second=Then it reads a line.",
  )
  assert run.returncode == 0, run.stderr[-3000:]
  assert "fill_mask: the [MASK] returns a list." in run.stdout
  assert "  [MASK] at token 2: " in run.stdout
  assert "sentence_order: P(in order) = " in run.stdout
  assert (
      "query_saved_model: warning: the [MASK] of text 2 lies past the "
      "model's seq_length and was truncated away" in run.stderr
  )
  assert (
      "query_saved_model: warning: --fill_mask text 3 has no [MASK]"
      in run.stderr
  )
  assert "no mask here" not in run.stdout
  run = query(serving, "--fill_mask=a [MASK].", "--first=It opens.")
  assert run.returncode == 0, run.stderr[-3000:]
  assert "warning: --first without --second" in run.stderr
  assert "sentence_order" not in run.stdout
  for flags, expected in (
      ((serving, "--second=It opens."), "nothing to ask"),
      ((serving, "--fill_mask="), "nothing to ask"),
      (
          (f"--saved_model={export_dir}/encoder", "--fill_mask=a [MASK]."),
          "has no 'fill_mask' signature",
      ),
  ):
    helpers.assert_one_line(query(*flags), "query_saved_model", expected)
