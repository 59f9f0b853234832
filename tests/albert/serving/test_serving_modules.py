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

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from albert.finetuning.own_data.text_multilabel import MultiLabelServingModule
from albert.finetuning.own_data.token_classification import (
    TokenClassificationServingModule,
)
from albert.finetuning.race.task import RaceServingModule
from albert.finetuning.sentence_classification import GlueServingModule
from albert.finetuning.squad.serving import SquadServingModule
from albert.modeling.classifier import AlbertClassifier
from albert.modeling.multiple_choice import AlbertMultipleChoice
from albert.modeling.pretrainer import AlbertPretrainer
from albert.modeling.sentence_embedder import AlbertSentenceEmbedder
from albert.modeling.squad import AlbertSquadModel
from albert.modeling.token_classifier import AlbertTokenClassifier
from albert.serving.embedding_serving import EmbeddingServingModule
from albert.serving.text_serving_module import TextServingModule
from albert.serving.wordpiece_preprocessor import make_preprocessor
from official.core import graph_ops
from tests import helpers
from tests.albert.serving.conftest import CONFIG

SEQ = 40
# Short and long texts in one batch; the last is cut at SEQ either way.
TEXTS = [
    "the file opens.",
    "a list of values returns the first [MASK] of the table it was given",
    "",
    "it runs " * 40,
]
PAIRS = ["it opens.", "the value", "a table of lists returns", "no"]
ATOL = 1e-5
RECORD = os.path.join(helpers.REPO, "tests/testdata/tf_serving/ops.json")
WHERE = "TF Serving's TensorFlow"


def _model(cls, **kwargs):
  tf_keras.utils.set_random_seed(7)
  model = cls.from_config_object(CONFIG, **kwargs)
  model(model.dummy_inputs())
  return model


def _builders():
  """{kind: preprocessor -> serving module}, each on its own random model
  (made now: seeding drops the eager SentencePiece resources made before
  it, so the preprocessors come after)."""
  pretrainer = _model(AlbertPretrainer)
  classifiers = {
      k: _model(AlbertClassifier, num_classes=n)
      for k, n in (("classification", 3), ("regression", 1), ("multilabel", 4))
  }
  tagger = _model(AlbertTokenClassifier, num_classes=3)
  squad = {v: _model(AlbertSquadModel, version=v) for v in ("1.1", "2.0")}
  race = _model(AlbertMultipleChoice)
  embedder = AlbertSentenceEmbedder(pretrainer.encoder, normalize=True)
  embedder(embedder.dummy_inputs())
  return {
      "pretrained": lambda p: TextServingModule(pretrainer, p, top_k=3),
      "classification": lambda p: GlueServingModule(
          classifiers["classification"], p, labels=list("xyz"), pair=True
      ),
      "regression": lambda p: GlueServingModule(
          classifiers["regression"], p, labels=None, pair=True
      ),
      "multilabel": lambda p: MultiLabelServingModule(
          classifiers["multilabel"],
          p,
          labels=list("abcd"),
          thresholds=[0.5, 0.4, 0.6, 0.5],
          pair=True,
      ),
      "token_classification": lambda p: TokenClassificationServingModule(
          tagger, p, labels=["O", "B-X", "I-X"]
      ),
      **{
          f"squad_{v}": (
              lambda p, m=m: SquadServingModule(
                  m, p, max_query_length=8, max_answer_length=5, doc_stride=6
              )
          )
          for v, m in squad.items()
      },
      "race": lambda p: RaceServingModule(race, p, max_qa_length=12),
      "sentence_embedding": lambda p: EmbeddingServingModule(embedder, p),
  }


@pytest.fixture(scope="module")
def modules(spm_model):
  """{kind: (fixed-length module, dynamic-length module)}."""
  builders = _builders()
  preprocessors = [
      make_preprocessor(
          spm_model_file=str(spm_model), seq_length=SEQ, dynamic_length=dynamic
      )
      for dynamic in (False, True)
  ]
  return {
      kind: tuple(build(p) for p in preprocessors)
      for kind, build in builders.items()
  }


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


@pytest.mark.parametrize("kind", ["classification", "regression", "multilabel"])
def test_sentence_heads_and_tf_example(modules, kind):
  fixed, dynamic = modules[kind]
  first, second = tf.constant(TEXTS), tf.constant(PAIRS)
  _assert_same(fixed._serve(first, second), dynamic._serve(first, second))
  if kind == "multilabel":
    return
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


def test_token_classification_squad_race_and_embedding(modules):
  text = tf.constant(TEXTS)
  fixed, dynamic = modules["token_classification"]
  _assert_same(fixed._serve(text), dynamic._serve(text))
  questions = tf.constant(PAIRS[:3])
  contexts = tf.constant(TEXTS[1:4])  # one context spans several windows
  for version in ("1.1", "2.0"):
    fixed, dynamic = modules[f"squad_{version}"]
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


def _signature_ops(module):
  """`graph_ops.graph_ops` over every signature of `module`."""
  used = {}
  for fn in module.signatures().values():
    concrete = fn.get_concrete_function()
    for op, attrs in graph_ops.graph_ops(concrete.graph.as_graph_def()).items():
      used.setdefault(op, set()).update(attrs)
  return used


def test_every_export_uses_only_what_tf_serving_knows(modules, export_dir):
  known = graph_ops.read_record(RECORD)
  assert known["tensorflow"].startswith("2.20")
  problems = {}
  for kind, (_, dynamic) in sorted(modules.items()):
    problems[kind] = graph_ops.unknown(_signature_ops(dynamic), known, WHERE)
  # The pretrained export as `run_export` saves it (saver and asset ops too).
  for name in ("encoder", "preprocessing", "serving"):
    used = graph_ops.saved_model_ops(str(export_dir / name))
    problems[f"saved {name}"] = graph_ops.unknown(used, known, WHERE)
  assert problems == {k: [] for k in problems}


def test_the_op_check_reports_what_a_server_lacks(modules):
  known = graph_ops.read_record(RECORD)
  fixed, _ = modules["pretrained"]
  used = _signature_ops(fixed)
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
  (line,) = graph_ops.unknown(_signature_ops(xla), known)
  assert "--xla_cpu_compilation_enabled=true" in line
