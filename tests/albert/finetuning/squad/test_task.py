"""SquadTask end to end on a learnable synthetic SQuAD written by the test.

The synthetic SQuAD of `albert.experiments.synthetic_squad`: each context is
random words of the tiny vocabulary (randomly capitalised, so answers must
come from the original text); one of three marker words occurs once and the
answer is the word right after it; the question names the marker. For v2.0 a
third of the questions have a context without any marker (unanswerable). A
tiny ALBERT trained from scratch must reach >= 90% EM on dev;
predictions.json must score, under the official script, what the task
reported; the exported SavedModel must answer raw text in a fresh process
that imports only tensorflow and tensorflow_text.
"""

import json
import random

import gin
import pytest

from albert.experiments import synthetic_squad
from albert.finetuning import training as finetuning
from albert.finetuning.squad import metrics as squad_metrics
from tests import helpers

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
  markers, words = synthetic_squad.markers_and_words(tokenizer, 40)
  data_dir = tmp_path / "data"
  data_dir.mkdir()
  synthetic_squad.write_squad(
      data_dir / f"train-v{version}.json", rng, words, markers, 1200, version
  )
  gold = synthetic_squad.write_squad(
      data_dir / f"dev-v{version}.json", rng, words, markers, 120, version
  )
  recipe = "squad_v1.gin" if version == "1.1" else "squad_v2.gin"
  common = dict(
      model_dir=str(tmp_path / "model"),
      gin_file=[f"gin/finetune/{recipe}"],
      gin_param=synthetic_squad.gin_params(version, 1000),
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
  # Forked from the zygote of TensorFlow and TF-Text alone (SERVING_ENV).
  done = helpers.run(
      ["-c", _SERVE, str(tmp_path / "export"), str(request)],
      env=helpers.SERVING_ENV,
      timeout=300,
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
