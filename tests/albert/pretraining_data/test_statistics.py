"""Statistics of a few thousand generated records, parsed by TensorFlow.

Figures of the original tool on real text (docs/reference.md section 8):
contiguous masked runs of 1 / 2 / 3 whole words 56 / 27 / 16 %, masked
inputs 80 / 10 / 10 %. The sample corpus is the standard library's
documentation.
"""

import numpy as np
import pytest


@pytest.fixture(scope="module", params=["examples", "documents"])
def records(request, stats_dataset):
  """The offline generator's records, or as many examples of the same
  corpus paired and masked as read from the documents format: every test
  below holds for both."""
  if request.param == "examples":
    manifest, config, arrays, _ = stats_dataset
  else:
    manifest, config, arrays = request.getfixturevalue("documents_stats")
  lengths = arrays["input_mask"].sum(axis=1)
  return manifest, config, arrays, lengths


def test_record_count_and_manifest(stats_dataset):
  manifest, config, arrays, _ = stats_dataset
  lengths = arrays["input_mask"].sum(axis=1)
  n = len(arrays["input_ids"])
  assert n > 3000
  assert manifest["num_examples"] == n
  assert sum(s["num_examples"] for s in manifest["shards"]) == n
  assert manifest["num_tokens"] == int(lengths.sum())
  assert manifest["num_masked_positions"] == int(
      arrays["masked_lm_weights"].sum()
  )
  assert manifest["flags"]["max_seq_length"] == config.max_seq_length


def test_sequences_are_cls_a_sep_b_sep(records, tokenizer):
  _, config, arrays, lengths = records
  for row in range(len(lengths)):
    length = lengths[row]
    ids, seg = arrays["input_ids"][row], arrays["segment_ids"][row]
    mask = arrays["input_mask"][row]
    assert 5 <= length <= config.max_seq_length
    assert mask[:length].all() and not mask[length:].any()
    assert not ids[length:].any() and not seg[length:].any()
    assert ids[0] == tokenizer.cls_id and ids[length - 1] == tokenizer.sep_id
    seps = np.flatnonzero(ids[:length] == tokenizer.sep_id)
    assert len(seps) == 2  # [SEP] never appears as a masked input.
    first_sep = seps[0]
    assert 1 < first_sep < length - 2  # A and B are not empty.
    assert not seg[: first_sep + 1].any() and seg[first_sep + 1 : length].all()


def test_token_boundary_marks_word_starts(records, tokenizer):
  _, _, arrays, lengths = records
  for row in range(0, len(lengths), 7):
    length = lengths[row]
    ids, boundary = arrays["input_ids"][row], arrays["token_boundary"][row]
    k = int(arrays["masked_lm_weights"][row].sum())
    original = ids.copy()
    original[arrays["masked_lm_positions"][row][:k]] = arrays["masked_lm_ids"][
        row
    ][:k]
    special = (original == tokenizer.cls_id) | (original == tokenizer.sep_id)
    expected = tokenizer.is_word_start[original[:length]] | special[:length]
    np.testing.assert_array_equal(boundary[:length], expected)
    assert not boundary[length:].any()


def test_masked_positions_never_special_or_padding(records, tokenizer):
  _, config, arrays, lengths = records
  controls = [0, 1, tokenizer.cls_id, tokenizer.sep_id, tokenizer.mask_id]
  counts = arrays["masked_lm_weights"].sum(axis=1).astype(int)
  for row in range(len(lengths)):
    k = counts[row]
    positions = arrays["masked_lm_positions"][row][:k]
    labels = arrays["masked_lm_ids"][row][:k]
    assert np.all(np.diff(positions) > 0)
    assert positions.min() >= 1 and positions.max() < lengths[row] - 1
    assert not np.isin(labels, [0] + controls[2:]).any()  # <unk> may be.
    inputs = arrays["input_ids"][row][positions]
    # Random replacements are ordinary pieces, never control or <unk>.
    replaced = (inputs != tokenizer.mask_id) & (inputs != labels)
    assert not np.isin(inputs[replaced], controls).any()
    assert k <= min(
        config.max_predictions_per_seq,
        max(1, round(lengths[row] * config.masked_lm_prob)),
    )
  # The budget is nearly always used up.
  budgets = np.minimum(20, np.maximum(1, np.round(lengths * 0.15)))
  assert (counts / budgets).mean() > 0.9


def test_masked_inputs_80_10_10(records, tokenizer):
  _, _, arrays, _ = records
  weights = arrays["masked_lm_weights"] > 0
  inputs = np.take_along_axis(
      arrays["input_ids"], arrays["masked_lm_positions"], axis=1
  )[weights]
  labels = arrays["masked_lm_ids"][weights]
  total = len(labels)
  assert abs(np.mean(inputs == tokenizer.mask_id) - 0.8) < 0.015
  assert abs(np.mean(inputs == labels) - 0.1) < 0.015
  assert (
      abs(np.mean((inputs != labels) & (inputs != tokenizer.mask_id)) - 0.1)
      < 0.015
  )
  assert total > 40000


def test_sentence_order_labels_are_balanced(records):
  manifest, _, arrays, _ = records
  labels = arrays["next_sentence_labels"][:, 0]
  assert set(np.unique(labels)) == {0, 1}
  assert abs(labels.mean() - 0.5) < 0.03
  if "sentence_label_1_fraction" in manifest:  # Not the documents format.
    assert manifest["sentence_label_1_fraction"] == pytest.approx(labels.mean())


def test_masked_runs_in_whole_words_match_the_original(records):
  _, _, arrays, _ = records
  runs = np.zeros(4)
  for row in range(len(arrays["input_ids"])):
    k = int(arrays["masked_lm_weights"][row].sum())
    positions = arrays["masked_lm_positions"][row][:k]
    boundary = arrays["token_boundary"][row]
    breaks = np.flatnonzero(np.diff(positions) != 1) + 1
    for run in np.split(positions, breaks):
      words = int(boundary[run].sum()) + (0 if boundary[run[0]] else 1)
      runs[min(words, 4) - 1] += 1
  share = runs / runs.sum()
  np.testing.assert_allclose(share[:3], [0.56, 0.27, 0.16], atol=0.04)
  assert share[3] < 0.05  # Longer runs only where two n-grams touch.


def _shares(arrays, mask_id):
  """Per-example and per-masked-position figures of one dataset."""
  lengths = arrays["input_mask"].sum(axis=1)
  weights = arrays["masked_lm_weights"] > 0
  inputs = np.take_along_axis(
      arrays["input_ids"], arrays["masked_lm_positions"], axis=1
  )[weights]
  labels = arrays["masked_lm_ids"][weights]
  return {
      "tokens per example": lengths.astype(float),
      "masked per token": weights.sum(axis=1) / lengths,
      "short (< 64 tokens)": (lengths < 64).astype(float),
      "segment A share": (
          (arrays["segment_ids"] == 0) & (arrays["input_mask"] > 0)
      ).sum(axis=1)
      / lengths,
      "label 1": arrays["next_sentence_labels"][:, 0].astype(float),
      "[MASK] share": (inputs == mask_id).astype(float),
      "kept share": (inputs == labels).astype(float),
  }


def test_documents_match_the_offline_generator(
    stats_dataset, documents_stats, tokenizer
):
  # Two samples of the same corpus with the same options: every mean within
  # 4 standard errors of their difference (the shapes above are checked for
  # each on its own).
  offline = _shares(stats_dataset[2], tokenizer.mask_id)
  dynamic = _shares(documents_stats[2], tokenizer.mask_id)
  for name, a in offline.items():
    b = dynamic[name]
    error = np.sqrt(a.var() / len(a) + b.var() / len(b))
    assert abs(a.mean() - b.mean()) < 4 * error + 1e-9, (
        name,
        a.mean(),
        b.mean(),
        error,
    )


@pytest.mark.slow
def test_random_document_gives_the_original_label_share(
    stats_dataset, tmp_path, corpus_path, spm_model
):
  # The original pairs every single-segment chunk with a random document
  # and labels it 1; --single_segment=random_document must give the label-1
  # share of the original algorithm (original_baseline) on the same corpus,
  # above the 50% of the split rule (`records`).
  from albert.pretraining_data.data_config import PretrainingDataConfig
  from albert.pretraining_data.original_baseline import run_original_baseline
  from albert.pretraining_data.pipeline import create_pretraining_data
  from tests.albert.pretraining_data.conftest import read_documents_examples
  from tests.albert.pretraining_data.conftest import STATS_CONFIG

  config = PretrainingDataConfig(
      **STATS_CONFIG, single_segment="random_document"
  )
  manifest = create_pretraining_data(
      input_file=corpus_path,
      output_file=str(tmp_path / "random_document.tfrecord"),
      spm_model_file=spm_model,
      config=config,
      num_workers=2,
  )
  with open(corpus_path, encoding="utf-8") as f:
    baseline = run_original_baseline(
        f.readlines(), spm_model, str(tmp_path / "baseline.tfrecord"), config
    )
  ours = manifest["sentence_label_1_fraction"]
  original = baseline["sentence_label_1"] / baseline["examples"]
  split = stats_dataset[0]["sentence_label_1_fraction"]
  assert abs(ours - original) < 0.03, (ours, original)
  # The same rule paired as read from the documents format.
  create_pretraining_data(
      input_file=corpus_path,
      output_file=str(tmp_path / "documents" / "docs.tfrecord"),
      spm_model_file=spm_model,
      config=PretrainingDataConfig(
          output_format="documents",
          dupe_factor=1,
          block_bytes=STATS_CONFIG["block_bytes"],
          single_segment="random_document",
      ),
  )
  # Four times the original's examples: the share is the rule's, and the
  # label of every pair is a coin of its own, so fewer examples put it
  # within 0.03 of the original's by chance only (about 1.3 sd).
  dynamic = read_documents_examples(
      str(tmp_path / "documents" / "docs.tfrecord"), 4 * baseline["examples"]
  )["next_sentence_labels"].mean()
  assert abs(dynamic - original) < 0.03, (dynamic, original)
  assert abs(split - 0.5) < 0.02
  assert ours > split + 0.05, (ours, split)
