"""`RaceTask`: RACE reading comprehension, one logit per option.

Recipe: docs/reference.md section 6.

Each of an example's four options becomes one packed input
`[CLS] article [SEP] qa [SEP]`, where qa is the question with its `_` blank
filled by the option (or the question followed by the option). qa keeps its
last `max_qa_length` tokens (the option is at the end) and the article is
cut to fit the rest, as the original `run_race.py` does.
"""

import json
import os
from typing import Dict, Sequence

import gin
import numpy as np
import tensorflow as tf

from albert.serving.preprocessor import Preprocessor
from albert.finetuning.race import data as race_data
from albert.finetuning.race import metrics as race_metrics
from albert.finetuning.classification_task import ClassificationTask
from albert.modeling.multiple_choice import AlbertMultipleChoice
from official.io import atomic_write
from official.core import export_base

NUM_OPTIONS = 4
LETTERS = "ABCD"


def question_with_option(question: str, option: str) -> str:
  """The qa text of one option: the blank filled, else question + option."""
  if "_" in question:
    return question.replace("_", option)
  return f"{question} {option}"


@gin.configurable
class RaceTask(ClassificationTask):
  """RACE (middle and high school) with `AlbertMultipleChoice`.

  Args:
    max_qa_length: tokens kept of question + option (their end).
    levels: which parts of RACE to read (`middle`, `high`).
    **kwargs: `FinetuneTask` arguments.
  """

  name = "race"
  eval_splits = ("dev",)
  predict_splits = ("test",)

  def __init__(
      self,
      *,
      max_qa_length: int = 128,
      levels: Sequence[str] = ("middle", "high"),
      **kwargs,
  ):
    super().__init__(**kwargs)
    if not 0 < max_qa_length <= self.seq_length - 3:
      raise ValueError(
          f"RaceTask.max_qa_length={max_qa_length} must be in "
          f"[1, seq_length - 3 = {self.seq_length - 3}]"
      )
    self.max_qa_length = max_qa_length
    self.levels = tuple(levels)

  def read_examples(self, split):
    return race_data.read_race(
        self._require_data_dir(), split, levels=self.levels
    )

  def feature_options(self):
    return {"max_qa_length": self.max_qa_length, "levels": self.levels}

  def feature_spec(self):
    shape = [NUM_OPTIONS, self.seq_length]
    return {
        "input_word_ids": tf.TensorSpec(shape, tf.int32),
        "input_mask": tf.TensorSpec(shape, tf.int32),
        "input_type_ids": tf.TensorSpec(shape, tf.int32),
        "label": tf.TensorSpec([], tf.int32),
    }

  def featurize(self, examples, *, training):
    del training  # the same features for training and prediction
    tok = self.tokenizer
    for example in examples:
      article = tok.tokenize(example.context)
      options = []
      for option in example.options:
        qa = tok.tokenize(question_with_option(example.question, option))
        qa = qa[-self.max_qa_length :]
        options.append(self.pack(article[: self.seq_length - 3 - len(qa)], qa))
      feature = {k: np.stack([o[k] for o in options]) for k in options[0]}
      feature["label"] = example.label if example.label is not None else -1
      yield feature

  def build_task_model(self):
    return AlbertMultipleChoice.from_config_object(
        self.config, dropout_rate=self.dropout_rate
    )

  def evaluate_outputs(self, split, examples, features, outputs):
    return race_metrics.race_metrics(
        np.argmax(outputs["logits"], axis=-1),
        np.array([e.label for e in examples]),
        [e.group for e in examples],
    )

  def write_predictions(self, split, examples, features, outputs, output_dir):
    """RACE_{split}.json: {guid: {"answer": letter, "probabilities": [4]}}."""
    logits = outputs["logits"]
    probabilities = np.exp(logits - logits.max(-1, keepdims=True))
    probabilities /= probabilities.sum(-1, keepdims=True)
    predictions = {
        e.guid: {
            "answer": LETTERS[int(np.argmax(p))],
            "probabilities": [round(float(x), 6) for x in p],
        }
        for e, p in zip(examples, probabilities)
    }
    path = os.path.join(output_dir, f"RACE_{split}.json")
    atomic_write.write_atomic(path, json.dumps(predictions, indent=1))
    return [path]

  def serving_module(self, model, preprocessor):
    return RaceServingModule(model, preprocessor, self.max_qa_length)


_TEXT = tf.TensorSpec([None], tf.string)


class RaceServingModule(export_base.ExportModule):
  """Raw-text multiple choice: article, question and four options in.

  Signature `serving_default(article [B], question [B], options [B, 4])` ->
  `probabilities` float32 [B, 4] and `answer` int32 [B] (0-3, argmax).
  """

  def __init__(
      self,
      model: AlbertMultipleChoice,
      preprocessor: Preprocessor,
      max_qa_length: int,
      name: str = "race_serving",
  ):
    super().__init__(model, name=name)
    self.preprocessor = preprocessor
    self.max_qa_length = max_qa_length

  def _pack_options(self, article, question, options):
    """int32 [B, 4, T] inputs; the same truncation as `RaceTask.featurize`."""
    p = self.preprocessor
    article, question, options = p.check_same_batch(
        article=article, question=question, options=options
    )
    batch = tf.shape(options)[0]
    questions = tf.repeat(question, NUM_OPTIONS)  # [B*4]
    flat_options = tf.reshape(options, [-1])  # [B*4]
    # Every "_" is filled, as Python's str.replace does: each part before a
    # blank gets the option appended; the last part's copy is cut off again.
    parts = tf.strings.split(questions, sep="_")  # [B*4, (parts)]
    option_per_part = tf.repeat(flat_options, parts.row_lengths())
    joined = tf.strings.reduce_join(
        parts.with_flat_values(
            tf.strings.join([parts.flat_values, option_per_part])
        ),
        axis=1,
    )
    lengths = tf.strings.length(joined) - tf.strings.length(flat_options)
    filled = tf.strings.substr(joined, tf.zeros_like(lengths), lengths)
    appended = tf.strings.join([questions, flat_options], separator=" ")
    has_blank = tf.strings.regex_full_match(questions, "(?s).*_.*")
    qa = p.tokenize(tf.where(has_blank, filled, appended))[
        :, -self.max_qa_length :
    ]
    articles = tf.gather(
        p.tokenize(article), tf.range(batch * NUM_OPTIONS) // NUM_OPTIONS
    )
    budget = p.seq_length - 3 - qa.row_lengths()  # [B*4]
    keep = tf.ragged.range(articles.row_lengths()) < budget[:, tf.newaxis]
    articles = tf.ragged.boolean_mask(articles, keep)
    packed = p.pack_trimmed([articles, qa])  # [B*4, T] each
    # T: the longest option (the preprocessor's dynamic length), or
    # seq_length.
    shape = [batch, NUM_OPTIONS, tf.shape(packed["input_word_ids"])[1]]
    return {k: tf.reshape(v, shape) for k, v in packed.items()}

  @tf.function(
      input_signature=[
          _TEXT,
          _TEXT,
          tf.TensorSpec([None, NUM_OPTIONS], tf.string),
      ],
      autograph=False,
  )
  def serve(self, article, question, options):
    inputs = self._pack_options(article, question, options)
    logits = self.model(inputs, training=False)["logits"]  # [B, 4]
    return {
        "probabilities": tf.nn.softmax(logits, axis=-1),
        "answer": tf.argmax(logits, axis=-1, output_type=tf.int32),
    }

  def signatures(self) -> Dict[str, tf.types.experimental.ConcreteFunction]:
    return {"serving_default": self.serve}
