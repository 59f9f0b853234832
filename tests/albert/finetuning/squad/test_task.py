"""SquadTask end to end on a learnable synthetic SQuAD written by the test.

Each context is random words of the tiny vocabulary (randomly capitalised, so
answers must come from the original text); one of three marker words occurs
once and the answer is the word right after it; the question names the
marker. For v2.0 a third of the questions have a context without any marker
(unanswerable). A tiny ALBERT trained from scratch must reach >= 90% EM on
dev; predictions.json must score, under the official script, what the task
reported; the exported SavedModel must answer raw text in a fresh process
that imports only tensorflow and tensorflow_text.
"""

import json
import os
import random

import gin
import pytest

from albert.finetuning import training as finetuning
from albert.text.tokenization import SPACE_MARK
from albert.finetuning.squad import metrics as squad_metrics
from tests import helpers

MARKERS = 3
CONTEXT_WORDS = 12


def _single_piece_words(tokenizer, count):
  words = []
  for i in range(tokenizer.vocab_size):
    piece = tokenizer.id_to_piece(i)
    word = piece[1:]
    if (
        piece.startswith(SPACE_MARK)
        and word.isalpha()
        and word.isascii()
        and len(word) >= 3
        and tokenizer.tokenize(word) == [i]
        and tokenizer.tokenize(word.capitalize()) == [i]
    ):
      words.append(word)
  assert len(words) >= count
  return words[:count]


def _write_squad(path, rng, words, markers, n, version):
  qas_all, data = [], []
  for k in range(n):
    marker = rng.choice(markers)
    context = [
        w.capitalize() if rng.random() < 0.3 else w
        for w in rng.choices(words, k=CONTEXT_WORDS)
    ]
    impossible = version == "2.0" and k % 3 == 0
    qa = {"id": f"q{k}", "question": f"What follows {marker}?"}
    if impossible:
      qa.update(answers=[], is_impossible=True)
    else:
      at = rng.randrange(CONTEXT_WORDS - 1)
      context.insert(at, marker)
      start = len(" ".join(context[: at + 1])) + 1
      qa["answers"] = [{"text": context[at + 1], "answer_start": start}]
      if version == "2.0":
        qa["is_impossible"] = False
    text = "  ".join(context) if k % 5 == 0 else " ".join(context)
    if k % 5 == 0 and not impossible:  # Double spaces shift the offsets.
      qa["answers"][0]["answer_start"] = (
          text.index(f"{marker}  {context[at + 1]}") + len(marker) + 2
      )
    data.append({"context": text, "qas": [qa]})
    qas_all.append(qa)
  with open(path, "w", encoding="utf-8") as f:
    json.dump(
        {
            "version": version,
            "data": [{"title": "synthetic", "paragraphs": data}],
        },
        f,
    )
  return {qa["id"]: [a["text"] for a in qa["answers"]] for qa in qas_all}


def _gin_params(version, steps):
  return [
      "AlbertConfig.vocab_size = 2000",
      "AlbertConfig.embedding_size = 32",
      "AlbertConfig.hidden_size = 64",
      "AlbertConfig.num_layers = 2",
      "AlbertConfig.num_heads = 4",
      "AlbertConfig.intermediate_size = 128",
      "AlbertConfig.max_position_embeddings = 64",
      "AlbertConfig.dropout_rate = 0.0",
      "AlbertConfig.attention_dropout_rate = 0.0",
      "SquadTask.seq_length = 32",
      "SquadTask.max_query_length = 8",
      "SquadTask.doc_stride = 8",
      "SquadTask.global_batch_size = 32",
      "SquadTask.eval_batch_size = 64",
      "SquadTask.dropout_rate = 0.0",
      # v1.1: the masked head, which reaches 90% EM at this test's seed
      # (the original's unmasked one at some seeds only: docs/experiments.md).
      "SquadTask.context_mask = True",
      "OptimizerConfig.learning_rate = 1e-3",
      "EpochSchedule.train_epochs = None",
      "EpochSchedule.warmup_proportion = None",
      f"TRAIN_STEPS = {steps}",
      f"OptimizerConfig.warmup_steps = {steps // 10}",
      "TrainerConfig.steps_per_loop = 50",
      "TrainerConfig.checkpoint_interval = 100000",
  ]


_SERVE = """
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the SentencePiece ops)
assert "albert" not in sys.modules
model = tf.saved_model.load(sys.argv[1])
questions, contexts = json.load(open(sys.argv[2]))
out = model.signatures["serving_default"](question=tf.constant(questions),
                                          context=tf.constant(contexts))
print(json.dumps({k: v.numpy().tolist() for k, v in out.items()},
                 default=lambda b: b.decode("utf-8")))
"""


@pytest.mark.slow
@pytest.mark.parametrize("version", ["1.1", "2.0"])
def test_learns_synthetic_squad_and_serves(
    tmp_path, spm_model, tokenizer, version
):
  rng = random.Random(7)
  words = _single_piece_words(tokenizer, 40 + MARKERS)
  markers, words = words[:MARKERS], words[MARKERS:]
  data_dir = tmp_path / "data"
  data_dir.mkdir()
  _write_squad(
      data_dir / f"train-v{version}.json", rng, words, markers, 1200, version
  )
  gold = _write_squad(
      data_dir / f"dev-v{version}.json", rng, words, markers, 120, version
  )
  recipe = "squad_v1.gin" if version == "1.1" else "squad_v2.gin"
  common = dict(
      model_dir=str(tmp_path / "model"),
      gin_file=[f"gin/finetune/{recipe}"],
      gin_param=_gin_params(version, 1000),
      data_dir=str(data_dir),
      spm_model_file=spm_model,
  )
  gin.clear_config()
  try:
    results = finetuning.run(mode="train_and_eval", **common)
    gin.clear_config()
    finetuning.run(mode="predict", output_dir=str(tmp_path / "pred"), **common)
    gin.clear_config()
    finetuning.run(mode="export", export_dir=str(tmp_path / "export"), **common)
  finally:
    gin.clear_config()
  predictions = json.load(open(tmp_path / "pred" / "predictions.json"))
  assert set(predictions) == set(gold)
  if version == "1.1":
    assert results["dev/exact_match"] >= 90.0, results
    official = squad_metrics.evaluate_v1(gold, predictions)
    assert official["exact_match"] == pytest.approx(results["dev/exact_match"])
    assert official["f1"] == pytest.approx(results["dev/f1"])
  else:
    assert results["dev/exact"] >= 90.0, results
    assert (
        results["dev/HasAns_exact"] >= 85.0
        and results["dev/NoAns_exact"] >= 85.0
    ), results
    odds = json.load(open(tmp_path / "pred" / "null_odds.json"))
    assert set(odds) == set(gold)
    # The headline scores predictions.json as the original's evaluate_v2:
    # the null odds as the script's na_prob, at its 1.0.
    official = squad_metrics.evaluate_v2(
        gold, predictions, odds, squad_metrics.NA_PROB_THRESH
    )
    assert official["exact"] == pytest.approx(results["dev/exact"])
  # Answers are the original (capitalised) words, not normalised pieces.
  hits = [
      qid
      for qid, text in predictions.items()
      if text and gold[qid] and text == gold[qid][0]
  ]
  assert any(predictions[q][0].isupper() for q in hits)

  # The SavedModel answers raw text in a fresh process.
  dev = json.load(open(data_dir / f"dev-v{version}.json"))["data"][0][
      "paragraphs"
  ]
  qids = [p["qas"][0]["id"] for p in dev]
  request = tmp_path / "request.json"
  request.write_text(
      json.dumps(
          [[p["qas"][0]["question"] for p in dev], [p["context"] for p in dev]]
      )
  )
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  done = helpers.run(
      ["-c", _SERVE, str(tmp_path / "export"), str(request)],
      env=env,
      timeout=300,
      check=False,
  )
  assert done.returncode == 0, done.stderr[-2000:]
  served = json.loads(done.stdout.strip().splitlines()[-1])
  answers = dict(zip(qids, served["answer"]))
  if version == "1.1":
    served_em = squad_metrics.evaluate_v1(gold, answers)["exact_match"]
  else:
    served_em = squad_metrics.evaluate_v2(gold, answers)["exact"]
    assert all(isinstance(b, bool) for b in served["is_impossible"])
    assert all(
        a == "" for a, b in zip(served["answer"], served["is_impossible"]) if b
    )
  assert served_em >= 90.0
  same = sum(answers[q] == predictions[q] for q in qids)
  assert same >= 0.95 * len(qids)
  for k, qid in enumerate(qids):  # Word indices point at the answer words.
    if answers[qid]:
      context_words = dev[k]["context"].split()
      span = context_words[served["start_word"][k] : served["end_word"][k] + 1]
      assert " ".join(span) == answers[qid]
      chars = dev[k]["context"][served["start_char"][k] : served["end_char"][k]]
      assert " ".join(chars.split()) == answers[qid]
