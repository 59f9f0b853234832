"""Every raw-text serving module, the pretrained serving model's and each
fine-tuned head's:
  - pads a batch to its longest text and answers what the fixed-length module
    answers (within 1e-5), `tf_example` included;
  - uses only ops and attributes that the newest TF Serving release's
    TensorFlow and TF-Text know (tests/testdata/tf_serving/ops.json, recorded
    by tests/testdata/make_tf_serving_ops.py), and no function compiled with
    XLA unless asked to.

The modules are built in this process on tiny random models and called
directly; their SavedModels' answers to hostile requests are
`hostile.check`'s (test_export.py and the fine-tuning tests), and the
pretrained export's SavedModels are checked as saved.
"""

import copy
import os
import sys

import numpy as np
import pytest
import tensorflow as tf

from albert.serving.text_serving_module import TextServingModule
from albert.serving.wordpiece_preprocessor import make_preprocessor
from albert.finetuning import serving_check
from official.core import graph_ops
from tests import helpers
from tests.albert.serving import hostile
from tests.albert.serving.conftest import CONFIG

SEQ = 40
TEXTS, PAIRS = serving_check.TEXTS, serving_check.PAIRS
ATOL = 1e-5
RECORD = os.path.join(helpers.REPO, "tests/testdata/tf_serving/ops.json")
WHERE = "TF Serving's TensorFlow"


@pytest.fixture(scope="module")
def modules(spm_model):
  """{kind: (fixed-length module, dynamic-length module)}."""
  return serving_check.random_modules(
      CONFIG,
      lambda: [
          make_preprocessor(
              spm_model_file=str(spm_model),
              seq_length=SEQ,
              dynamic_length=dynamic,
          )
          for dynamic in (False, True)
      ],
  )


def _assert_same(fixed, dynamic, longest=None):
  """Equal outputs; an output with a length axis (axis 1 of size SEQ in the
  fixed answer) is compared on the first `longest` positions, which is
  the dynamic answer's whole length."""
  assert fixed.keys() == dynamic.keys()
  for name, want in fixed.items():
    want, got = np.asarray(want), np.asarray(dynamic[name])
    if want.ndim >= 2 and want.shape[1] == SEQ and got.shape != want.shape:
      assert got.shape[1] == longest, (name, got.shape)
      want = want[:, :longest]
    assert got.shape == want.shape, name
    if want.dtype.kind == "f":
      np.testing.assert_allclose(got, want, atol=ATOL, err_msg=name)
    else:
      np.testing.assert_array_equal(got, want, err_msg=name)


def _longest(preprocessor, texts):
  """The batch's longest packed input, as the dynamic module pads it."""
  packed = preprocessor.pack([preprocessor.tokenize(tf.constant(texts))], SEQ)
  return int(tf.reduce_max(tf.reduce_sum(packed["input_mask"], 1)))


def test_pretrained_serving_signatures(modules):
  fixed, dynamic = modules["pretrained"]
  longest = _longest(fixed.preprocessor, TEXTS)
  assert longest == SEQ  # the last text fills the export's maximum
  short_longest = _longest(fixed.preprocessor, TEXTS[:3])
  assert short_longest < SEQ
  for texts, n in ((TEXTS, longest), (TEXTS[:3], short_longest)):
    batch = tf.constant(texts)
    _assert_same(fixed.serve(batch), dynamic.serve(batch), n)
    _assert_same(fixed.fill_mask(batch), dynamic.fill_mask(batch), n)
    _assert_same(fixed.embed(batch), dynamic.embed(batch))
  short, pair = tf.constant(TEXTS[:3]), tf.constant(PAIRS[:3])
  _assert_same(
      fixed.sentence_order(short, pair), dynamic.sentence_order(short, pair)
  )
  assert dynamic.serve(short)["sequence_output"].shape[1] == short_longest


def test_sentence_head_and_tf_example(modules):
  """The classifier's signatures (regression and multi-label heads pack
  text the same way; their exports are op-checked below)."""
  fixed, dynamic = modules["classification"]
  first, second = tf.constant(TEXTS), tf.constant(PAIRS)
  _assert_same(fixed._serve(first, second), dynamic._serve(first, second))
  # tf_example: fixed-length records of short texts, cut to the longest.
  p = fixed.preprocessor
  packed = p.pack([p.tokenize(tf.constant(t)) for t in (TEXTS[:3], PAIRS[:3])])
  records = []
  for i in range(3):
    feature = {
        record: tf.train.Feature(
            int64_list=tf.train.Int64List(value=packed[name][i].numpy())
        )
        for record, name in (
            ("input_ids", "input_word_ids"),
            ("input_mask", "input_mask"),
            ("segment_ids", "input_type_ids"),
        )
    }
    example = tf.train.Example(features=tf.train.Features(feature=feature))
    records.append(example.SerializeToString())
  records = tf.constant(records)
  _assert_same(fixed._serve_examples(records), dynamic._serve_examples(records))


def test_window_heads(modules):
  """Single long texts read in windows (the last text spans several)."""
  text = tf.constant(TEXTS)
  for kind in (
      "classification_windows",
      "multilabel_windows",
      "token_classification_windows",
  ):
    fixed, dynamic = modules[kind]
    out = dynamic._serve(text)
    assert out["num_windows"].numpy().tolist()[2:] == [1, 5], kind
    _assert_same(fixed._serve(text), out)
    for case, batch in hostile.batches().items():  # each answered
      out = dynamic._serve(tf.constant(batch, tf.string, shape=[len(batch)]))
      assert {k: v.shape[0] for k, v in out.items()} == {
          k: len(batch) for k in out
      }, (kind, case)


@pytest.mark.slow
def test_token_classification_squad_race_and_embedding(modules):
  text = tf.constant(TEXTS)
  fixed, dynamic = modules["token_classification"]
  _assert_same(fixed._serve(text), dynamic._serve(text))
  questions = tf.constant(PAIRS[:3])
  contexts = tf.constant(TEXTS[1:4])  # one context spans several windows
  # v2.0 (v1.1 windows and packs the same way, with another head).
  fixed, dynamic = modules["squad_2.0"]
  _assert_same(
      fixed.serve(questions, contexts), dynamic.serve(questions, contexts)
  )
  fixed, dynamic = modules["race"]
  article = tf.constant(TEXTS[:2])
  question = tf.constant(["what opens _ ?", "which value"])
  options = tf.constant([["a", "b", "the file", "no"], list("wxyz")])
  _assert_same(
      fixed.serve(article, question, options),
      dynamic.serve(article, question, options),
  )
  fixed, dynamic = modules["sentence_embedding"]
  _assert_same(fixed.embed(text), dynamic.embed(text))


def test_every_export_uses_only_what_tf_serving_knows(modules, export_dir):
  known = graph_ops.read_record(RECORD)
  assert known["tensorflow"].startswith("2.20")
  problems = {}
  for kind, (_, dynamic) in sorted(modules.items()):
    problems[kind] = graph_ops.unknown(
        serving_check.signature_ops(dynamic), known, WHERE
    )
  # The pretrained export as `run_export` saves it (saver and asset ops too).
  for name in ("encoder", "preprocessing", "serving"):
    used = graph_ops.saved_model_ops(str(export_dir / name))
    problems[f"saved {name}"] = graph_ops.unknown(used, known, WHERE)
  assert problems == {k: [] for k in problems}


def test_the_op_check_reports_what_a_server_lacks(modules):
  known = graph_ops.read_record(RECORD)
  fixed, _ = modules["pretrained"]
  used = serving_check.signature_ops(fixed)
  assert "SentencepieceTokenizeOp" in used
  assert graph_ops.unknown(used, known) == []
  # An op or attribute the server's TensorFlow lacks: one line each.
  older = copy.deepcopy(known)
  del older["ops"]["SentencepieceTokenizeOp"]
  older["ops"]["MatMul"] = [a for a in older["ops"]["MatMul"] if a != "grad_a"]
  older["cpu_kernels"].remove("RaggedTensorToTensor")
  lines = graph_ops.unknown(used, older, "TF 1.0")
  assert "op SentencepieceTokenizeOp: not registered in TF 1.0" in lines
  assert "op MatMul: attribute grad_a unknown to TF 1.0" in lines
  assert "op RaggedTensorToTensor: no CPU kernel in TF 1.0" in lines
  # A module compiled with XLA is flagged (TF Serving needs a flag for it).
  xla = TextServingModule(fixed.model, fixed.preprocessor, xla=True)
  (line,) = graph_ops.unknown(serving_check.signature_ops(xla), known)
  assert "--xla_cpu_compilation_enabled=true" in line


@pytest.mark.slow
def test_check_saves_loads_elsewhere_and_compares_answers(modules, tmp_path):
  """`serving_check.check` end to end, with this environment standing in
  for the side one (tools/check_tf_serving.py runs it against TF
  Serving's TensorFlow): the same answers, every op known."""
  report = serving_check.check(
      {"regression": modules["regression"][1]},
      RECORD,
      str(tmp_path),
      side_python=sys.executable,
      side_script=os.path.join(
          helpers.REPO, "tests/testdata/make_tf_serving_ops.py"
      ),
  )
  assert report["side"]["tensorflow"] == tf.__version__
  assert report["regression"] == {
      "ops": [],
      "difference": 0.0,
      "signatures": ["serving_default"],
  }
  ours = {"score": np.array([0.5, -np.inf])}
  assert serving_check._difference(ours, {"score": [0.5, -np.inf]}) == 0.0
  assert serving_check._difference(ours, {"score": [0.25, -np.inf]}) == 0.25
  assert serving_check._difference(ours, {"score": [0.5]}) == np.inf
  assert serving_check._difference(ours, {"other": [0.5, 1.0]}) == np.inf
