"""Token classification: seqeval-exact entity metrics, the CoNLL reader,
first-piece labels, training on a synthetic NER set, prediction files and the
raw-text SavedModel with word tags and character offsets."""

import os
import random

import numpy as np
import pytest

from albert.finetuning.own_data import conll as conll_data
from albert.finetuning.own_data import entity_metrics
from albert.finetuning.own_data import token_classification
from official.errors import InputError
from tests.albert.serving import hostile
from tests.albert.finetuning import finetune_helpers as helpers

seqeval = pytest.importorskip("seqeval.metrics")

FILLER = (
    "the file name is a string of the module and the list of values "
    "with an object in each class for this function"
).split()
PEOPLE = [["alice"], ["bob", "marley"], ["guido", "van", "rossum"]]
PLACES = [["paris"], ["new", "york"], ["zürich"]]


def _sentence(rng):
  words, tags = [], []
  for _ in range(rng.randint(2, 4)):
    for _ in range(rng.randint(1, 3)):
      words.append(rng.choice(FILLER))
      tags.append("O")
    kind, names = rng.choice([("PER", PEOPLE), ("LOC", PLACES)])
    name = rng.choice(names)
    words += name
    tags += [f"B-{kind}"] + [f"I-{kind}"] * (len(name) - 1)
  return words, tags


def write_conll(folder, seed=0, n_train=200, n_dev=40, n_test=6):
  """CoNLL-2003's four columns (word POS chunk NER); test: words only."""
  rng = random.Random(seed)
  os.makedirs(folder, exist_ok=True)
  sentences = {}
  for split, n in (("train", n_train), ("dev", n_dev), ("test", n_test)):
    sentences[split] = [_sentence(rng) for _ in range(n)]
    with open(os.path.join(folder, f"{split}.txt"), "w") as f:
      f.write("-DOCSTART- -X- -X- O\n\n")
      for words, tags in sentences[split]:
        for word, tag in zip(words, tags):
          f.write(word + "\n" if split == "test" else f"{word} NN O {tag}\n")
        f.write("\n")
  return sentences


def test_entity_scores_equal_seqeval_on_random_tags():
  rng = random.Random(0)
  alphabet = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "E-LOC", "S-PER", "I-X"]
  for _ in range(300):
    true, predicted = [], []
    for _ in range(rng.randint(1, 4)):
      n = rng.randint(1, 8)
      true.append([rng.choice(alphabet) for _ in range(n)])
      predicted.append([rng.choice(alphabet) for _ in range(n)])
    ours = entity_metrics.entity_scores(true, predicted)
    for name, fn in (
        ("precision", seqeval.precision_score),
        ("recall", seqeval.recall_score),
        ("f1", seqeval.f1_score),
    ):
      assert ours[name] == pytest.approx(fn(true, predicted)), (true, predicted)
    report = seqeval.classification_report(
        true, predicted, output_dict=True, zero_division=0
    )
    for kind in {e[1] for e in entity_metrics.entities(true)}:
      assert ours[f"{kind}/f1"] == pytest.approx(report[kind]["f1-score"])
      assert ours[f"{kind}/support"] == report[kind]["support"]
  # By hand: gold PER(0-1), LOC(3); predicted PER(0-1), LOC(2-3).
  scores = entity_metrics.entity_scores(
      [["B-PER", "I-PER", "O", "B-LOC"]], [["B-PER", "I-PER", "B-LOC", "I-LOC"]]
  )
  assert (scores["precision"], scores["recall"], scores["f1"]) == (
      0.5,
      0.5,
      0.5,
  )


def test_conll_reader_skips_docstart_and_checks_columns(tmp_path):
  path = tmp_path / "train.txt"
  path.write_text(
      "-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\n\n"
      "Peter NNP B-NP B-PER\nBlackburn NNP I-NP I-PER\n"
  )
  sentences = conll_data.read_conll(str(path), tagged=True)
  assert [(s.words, s.tags) for s in sentences] == [
      (("EU", "rejects"), ("B-ORG", "O")),
      (("Peter", "Blackburn"), ("B-PER", "I-PER")),
  ]
  path.write_text("EU B-ORG\nrejects\n")
  with pytest.raises(InputError, match="line 2: 1 column.*line 1 has a tag"):
    conll_data.read_conll(str(path), tagged=None)
  path.write_text("EU\n")
  with pytest.raises(InputError, match="line 1: 'EU' has no tag"):
    conll_data.read_conll(str(path), tagged=True)


def test_labels_go_on_the_first_piece_of_each_word(tmp_path, spm_model):
  task = token_classification.TokenClassificationTask(
      labels=["B-PER", "I-PER", "O"],
      spm_model_file=spm_model,
      seq_length=12,
      model_config=helpers.TINY,
  )
  sentence = conll_data.TaggedSentence(
      "0",
      ("Guido", "van", "Rossum", "wrote", "python"),
      ("B-PER", "I-PER", "I-PER", "O", "O"),
  )
  (feature,) = task.featurize([sentence], training=True)
  tok = task.tokenizer
  pieces = [tok.tokenize(w) for w in sentence.words]
  assert all(pieces)
  positions, at = [], 1
  for ids in pieces:
    if at + len(ids) > 11:
      break
    positions.append(at)
    at += len(ids)
  assert feature["word_positions"] == positions
  want = np.full(12, -1)
  for p, tag in zip(positions, sentence.tags):
    want[p] = ["B-PER", "I-PER", "O"].index(tag)
  np.testing.assert_array_equal(feature["label_ids"], want)
  flat = [i for ids in pieces[: len(positions)] for i in ids]
  np.testing.assert_array_equal(
      feature["input_word_ids"][: len(flat) + 2],
      [tok.cls_id, *flat, tok.sep_id],
  )
  assert len(positions) < 5  # the sentence was cut at seq_length - 2 pieces
  with pytest.raises(InputError, match="tag 'PER' is neither O nor"):
    token_classification.TokenClassificationTask(
        labels=["PER", "O"], seq_length=12, model_config=helpers.TINY
    )


@pytest.mark.slow
def test_ner_trains_reports_entity_f1_predicts_and_serves(tmp_path, spm_model):
  data_dir = str(tmp_path / "ner")
  sentences = write_conll(data_dir)
  init = helpers.init_checkpoint(tmp_path / "init")
  model_dir = str(tmp_path / "model")
  common = dict(
      model_dir=model_dir, data_dir=data_dir, spm_model_file=spm_model
  )
  gin_file = "gin/finetune/token_classification.gin"
  params = [
      "TokenClassificationTask.seq_length = 48",
      "TokenClassificationTask.global_batch_size = 16",
      "OptimizerConfig.learning_rate = 1e-3",
      "EpochSchedule.train_epochs = 40.0",
  ]
  results = helpers.finetune(
      "train_and_eval", gin_file, params, init_checkpoint=init, **common
  )
  assert results["dev/f1"] >= 0.9, results
  assert {"dev/PER/f1", "dev/LOC/f1", "dev/precision", "dev/recall"} <= set(
      results
  )
  helpers.finetune("predict", gin_file, params, **common)
  with open(
      os.path.join(model_dir, "predictions", "test_predictions.txt")
  ) as f:
    blocks = [b.splitlines() for b in f.read().strip().split("\n\n")]
  assert [[line.split()[0] for line in b] for b in blocks] == [
      words for words, _ in sentences["test"]
  ]
  offline = [[line.split()[1] for line in b] for b in blocks]
  true = [tags for _, tags in sentences["test"]]
  assert seqeval.f1_score(true, offline) >= 0.8

  export_dir = str(tmp_path / "export")
  helpers.finetune("export", gin_file, params, export_dir=export_dir, **common)
  texts = [" ".join(words) for words, _ in sentences["test"]]
  texts.append(" ".join(["the"] * 50 + ["paris"]))  # past 46 pieces
  texts.append("  alice  is\tthe module of zürich ")
  out = helpers.call_saved_model(export_dir, {"text": texts})
  hostile.assert_answers_everything(export_dir, ["serving_default"])
  assert out["num_words"][-2] == 51
  assert out["tags"][-2][46:] == ["O"] * 5 and out["scores"][-2][46:] == [0] * 5
  assert min(out["scores"][-2][:46]) > 0
  for i, (words, _) in enumerate(sentences["test"]):
    n = out["num_words"][i]
    assert out["words"][i][:n] == words
    assert out["tags"][i][:n] == offline[i]  # the same tags as offline
  last = texts[-1]
  n = out["num_words"][-1]
  spans = [
      last[s:e]
      for s, e in zip(out["start_char"][-1][:n], out["end_char"][-1][:n])
  ]
  assert spans == ["alice", "is", "the", "module", "of", "zürich"]
  assert out["tags"][-1][:n] == ["B-PER", "O", "O", "O", "O", "B-LOC"]
  assert all(0 < s <= 1 for s in out["scores"][-1][:n])
