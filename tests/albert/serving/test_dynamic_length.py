"""Every raw-text serving module pads a batch to its longest text and answers
what the fixed-length module answers (within 1e-5): the pretrained serving
model's signatures, each fine-tuned head's and the `tf_example` signature.

The modules are built in this process on one tiny random encoder and called
directly (their SavedModels' answers to hostile requests are
`hostile.check`'s, in test_export.py and the fine-tuning tests).
"""

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
from albert.modeling.squad import AlbertSquadModel
from albert.modeling.token_classifier import AlbertTokenClassifier
from albert.serving.text_serving_module import TextServingModule
from albert.serving.wordpiece_preprocessor import make_preprocessor
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


def _preprocessors(spm_model):
  """(fixed, dynamic) preprocessors; made after the model, whose seeding
  (`tf.random.set_seed`) drops the eager SentencePiece resources made
  before it."""
  return [
      make_preprocessor(
          spm_model_file=str(spm_model), seq_length=SEQ, dynamic_length=dynamic
      )
      for dynamic in (False, True)
  ]


def _model(cls, **kwargs):
  tf_keras.utils.set_random_seed(7)
  model = cls.from_config_object(CONFIG, **kwargs)
  model(model.dummy_inputs())
  return model


def _assert_same(fixed, dynamic, longest):
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


def _longest(preprocessor, *texts):
  """The batch's longest packed input, as the dynamic module pads it."""
  segments = [preprocessor.tokenize(tf.constant(t)) for t in texts]
  packed = preprocessor.pack(segments, SEQ)
  return int(tf.reduce_max(tf.reduce_sum(packed["input_mask"], 1)))


def test_pretrained_serving_signatures(spm_model):
  pretrainer = _model(AlbertPretrainer)
  preprocessors = _preprocessors(spm_model)
  fixed_p = preprocessors[0]
  fixed, dynamic = (
      TextServingModule(pretrainer, p, top_k=3) for p in preprocessors
  )
  text = tf.constant(TEXTS)
  longest = _longest(fixed_p, TEXTS)
  assert longest == SEQ  # the last text fills the export's maximum
  short = tf.constant(TEXTS[:3])
  short_longest = _longest(fixed_p, TEXTS[:3])
  assert short_longest < SEQ
  for batch, n in ((text, longest), (short, short_longest)):
    _assert_same(fixed.serve(batch), dynamic.serve(batch), n)
    _assert_same(fixed.fill_mask(batch), dynamic.fill_mask(batch), n)
  pair = tf.constant(PAIRS[:3])
  _assert_same(
      fixed.sentence_order(short, pair),
      dynamic.sentence_order(short, pair),
      None,
  )
  assert dynamic.serve(short)["sequence_output"].shape[1] == short_longest


@pytest.mark.parametrize("kind", ["classification", "regression", "multilabel"])
def test_sentence_heads_and_tf_example(spm_model, kind):
  num = {"classification": 3, "regression": 1, "multilabel": 4}[kind]
  classifier = _model(AlbertClassifier, num_classes=num)
  preprocessors = _preprocessors(spm_model)
  fixed_p = preprocessors[0]

  def module(p):
    if kind == "multilabel":
      return MultiLabelServingModule(
          classifier,
          p,
          labels=list("abcd"),
          thresholds=[0.5, 0.4, 0.6, 0.5],
          pair=True,
      )
    labels = list("xyz") if kind == "classification" else None
    return GlueServingModule(classifier, p, labels=labels, pair=True)

  fixed, dynamic = (module(p) for p in preprocessors)
  first, second = tf.constant(TEXTS), tf.constant(PAIRS)
  _assert_same(fixed._serve(first, second), dynamic._serve(first, second), None)
  if kind == "multilabel":
    return
  # tf_example: fixed-length records of short texts, cut to the longest.
  packed = fixed_p.pack(
      [fixed_p.tokenize(tf.constant(t)) for t in (TEXTS[:3], PAIRS[:3])]
  )
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
  _assert_same(
      fixed._serve_examples(records), dynamic._serve_examples(records), None
  )


def test_token_classification(spm_model):
  model = _model(AlbertTokenClassifier, num_classes=3)
  preprocessors = _preprocessors(spm_model)
  fixed, dynamic = (
      TokenClassificationServingModule(model, p, labels=["O", "B-X", "I-X"])
      for p in preprocessors
  )
  text = tf.constant(TEXTS)
  _assert_same(fixed._serve(text), dynamic._serve(text), None)


@pytest.mark.parametrize("version", ["1.1", "2.0"])
def test_squad(spm_model, version):
  model = _model(AlbertSquadModel, version=version)
  preprocessors = _preprocessors(spm_model)
  fixed, dynamic = (
      SquadServingModule(
          model,
          p,
          max_query_length=8,
          max_answer_length=5,
          doc_stride=6,
      )
      for p in preprocessors
  )
  questions = tf.constant(PAIRS[:3])
  contexts = tf.constant(TEXTS[1:4])  # one context spans several windows
  _assert_same(
      fixed.serve(questions, contexts), dynamic.serve(questions, contexts), None
  )


def test_race(spm_model):
  model = _model(AlbertMultipleChoice)
  preprocessors = _preprocessors(spm_model)
  fixed, dynamic = (
      RaceServingModule(model, p, max_qa_length=12) for p in preprocessors
  )
  article = tf.constant(TEXTS[:2])
  question = tf.constant(["what opens _ ?", "which value"])
  options = tf.constant([["a", "b", "the file", "no"], list("wxyz")])
  _assert_same(
      fixed.serve(article, question, options),
      dynamic.serve(article, question, options),
      None,
  )
