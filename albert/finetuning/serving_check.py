"""Every raw-text serving module we export, checked for another TensorFlow
(TF Serving's).

`random_modules` builds each kind (the pretrained serving model, every
fine-tuned head, the sentence embedder) on a tiny random model; `check` saves
them, compares every SavedModel's ops with a record of what a server's
TensorFlow knows (`official.core.graph_ops`), and, given that TensorFlow's
Python (a side environment with TF Serving's TensorFlow and TF-Text), loads
each there and compares its answers with ours. `tools/check_tf_serving.py`
is its command.
"""

import json
import os
import subprocess
import tempfile
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf
import tf_keras

from albert.finetuning.own_data.text_multilabel import MultiLabelServingModule
from albert.finetuning.own_data.token_serving import (
    TokenClassificationServingModule,
)
from albert.finetuning.race.task import RaceServingModule
from albert.finetuning.sentence_classification import GlueServingModule
from albert.finetuning.squad.serving import SquadServingModule
from albert.modeling.classifier import AlbertClassifier
from albert.modeling.config import AlbertConfig
from albert.modeling.multiple_choice import AlbertMultipleChoice
from albert.modeling.pretrainer import AlbertPretrainer
from albert.modeling.sentence_embedder import AlbertSentenceEmbedder
from albert.modeling.squad import AlbertSquadModel
from albert.modeling.token_classifier import AlbertTokenClassifier
from albert.serving.embedding_serving import EmbeddingServingModule
from albert.serving.preprocessor import Preprocessor
from albert.serving.text_serving_module import TextServingModule
from albert.finetuning import long_text
from official.core import graph_ops

TEXTS = [
    "the file opens.",
    "a list of values returns the first [MASK] of the table it was given",
    "",
    "it runs " * 40,
]
PAIRS = ["it opens.", "the value", "a table of lists returns", "no"]
# kind: [(signature, inputs)]; every input a string batch.
REQUESTS = {
    "pretrained": [
        ("serving_default", {"text": TEXTS}),
        ("fill_mask", {"text": TEXTS}),
        ("sentence_order", {"first": TEXTS, "second": PAIRS}),
        ("embed", {"text": TEXTS}),
        ("similarity", {"first": TEXTS, "second": PAIRS}),
    ],
    "classification": [("serving_default", {"text_a": TEXTS, "text_b": PAIRS})],
    "regression": [("serving_default", {"text_a": TEXTS, "text_b": PAIRS})],
    "multilabel": [("serving_default", {"text": TEXTS, "text_pair": PAIRS})],
    "token_classification": [("serving_default", {"text": TEXTS})],
    # Single long texts read in windows (`long_text.py`).
    "classification_windows": [("serving_default", {"text_a": TEXTS})],
    "multilabel_windows": [("serving_default", {"text": TEXTS})],
    "token_classification_windows": [("serving_default", {"text": TEXTS})],
    "squad_1.1": [
        ("serving_default", {"question": PAIRS[:3], "context": TEXTS[1:4]})
    ],
    "squad_2.0": [
        ("serving_default", {"question": PAIRS[:3], "context": TEXTS[1:4]})
    ],
    "race": [
        (
            "serving_default",
            {
                "article": TEXTS[:2],
                "question": ["what opens _ ?", "which value"],
                "options": [["a", "b", "the file", "no"], list("wxyz")],
            },
        )
    ],
    "sentence_embedding": [
        ("embed", {"text": TEXTS}),
        ("similarity", {"first": TEXTS, "second": PAIRS}),
    ],
    # run_export's other two SavedModels (`exporter.export`).
    "preprocessing": [
        ("serving_default", {"text": TEXTS}),
        ("pair", {"first": TEXTS, "second": PAIRS}),
    ],
    "encoder": [
        (
            "serving_default",
            {
                "input_word_ids": [[2, 40, 41, 42, 3, 0], [2, 50, 3, 0, 0, 0]],
                "input_mask": [[1, 1, 1, 1, 1, 0], [1, 1, 1, 0, 0, 0]],
                "input_type_ids": [[0] * 6, [0] * 6],
            },
        )
    ],
}


def random_modules(
    config: AlbertConfig,
    make_preprocessors: Callable[[], Sequence[Preprocessor]],
) -> Dict[str, Tuple]:
  """{kind: (module per preprocessor)}: every raw-text serving module, each
  kind on its own random model (seeded). The preprocessors are made after
  the models: seeding drops the eager SentencePiece resources made before
  it."""

  def model(cls, **kwargs):
    tf_keras.utils.set_random_seed(7)
    m = cls.from_config_object(config, **kwargs)
    m(m.dummy_inputs())
    return m

  pretrainer = model(AlbertPretrainer)
  classifiers = {
      k: model(AlbertClassifier, num_classes=n)
      for k, n in (("classification", 3), ("regression", 1), ("multilabel", 4))
  }
  tagger = model(AlbertTokenClassifier, num_classes=3)
  squad = {v: model(AlbertSquadModel, version=v) for v in ("1.1", "2.0")}
  race = model(AlbertMultipleChoice)
  embedder = AlbertSentenceEmbedder(pretrainer.encoder, normalize=True)
  embedder(embedder.dummy_inputs())
  windows = long_text.Windows(length=10, stride=4, max_windows=5)
  builders = {
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
      "classification_windows": lambda p: GlueServingModule(
          classifiers["classification"],
          p,
          labels=list("xyz"),
          pair=False,
          windows=windows,
      ),
      "multilabel_windows": lambda p: MultiLabelServingModule(
          classifiers["multilabel"],
          p,
          labels=list("abcd"),
          thresholds=[0.5, 0.4, 0.6, 0.5],
          pair=False,
          windows=windows,
          aggregation="max_probability",
      ),
      "token_classification_windows": (
          lambda p: TokenClassificationServingModule(
              tagger, p, labels=["O", "B-X", "I-X"], windows=windows
          )
      ),
      "race": lambda p: RaceServingModule(race, p, max_qa_length=12),
      "sentence_embedding": lambda p: EmbeddingServingModule(embedder, p),
  }
  for version, squad_model in squad.items():
    builders[f"squad_{version}"] = lambda p, m=squad_model: SquadServingModule(
        m, p, max_query_length=8, max_answer_length=5, doc_stride=6
    )
  preprocessors = make_preprocessors()
  return {
      kind: tuple(build(p) for p in preprocessors)
      for kind, build in builders.items()
  }


def signature_ops(module) -> Dict:
  """`graph_ops.graph_ops` over every signature of a module (not saved)."""
  used: Dict = {}
  for fn in module.signatures().values():
    concrete = fn.get_concrete_function()
    for op, attrs in graph_ops.graph_ops(concrete.graph.as_graph_def()).items():
      used.setdefault(op, set()).update(attrs)
  return used


def _requests(paths: Dict[str, str]) -> List[Dict]:
  out = []
  for kind, path in sorted(paths.items()):
    for signature, inputs in REQUESTS[kind]:
      out.append(
          {
              "kind": kind,
              "saved_model": path,
              "signature": signature,
              "inputs": inputs,
              "dtypes": {
                  name: "int32" if kind == "encoder" else "string"
                  for name in inputs
              },
          }
      )
  return out


def _answer(requests: List[Dict]) -> List[Dict]:
  """What our TensorFlow answers (as the side script does)."""
  loaded, answers = {}, []
  for r in requests:
    if r["saved_model"] not in loaded:
      loaded[r["saved_model"]] = tf.saved_model.load(r["saved_model"])
    fn = loaded[r["saved_model"]].signatures[r["signature"]]
    outputs = fn(
        **{
            k: tf.constant(v, dtype=r["dtypes"][k])
            for k, v in r["inputs"].items()
        }
    )
    answers.append({k: v.numpy() for k, v in outputs.items()})
  return answers


def _difference(ours: Dict, theirs: Dict) -> float:
  """Largest absolute difference of the numeric outputs; inf where an
  output differs in shape, name or (strings, integers) value."""
  if ours.keys() != theirs.keys():
    return float("inf")
  worst = 0.0
  for name, value in ours.items():
    other = np.array(theirs[name])
    if value.dtype.kind in "SOU":
      same = value.astype(str).tolist() == other.astype(str).tolist()
      worst = max(worst, 0.0 if same else float("inf"))
    elif value.shape != other.shape:
      return float("inf")
    elif value.dtype.kind == "f":
      same = (value == other) | (np.isnan(value) & np.isnan(other))
      with np.errstate(invalid="ignore"):  # -inf - -inf where both agree
        gap = np.where(same, 0.0, np.abs(value - other))
      if np.isnan(gap).any():
        return float("inf")
      worst = max(worst, float(np.max(gap, initial=0.0)))
    elif not np.array_equal(value, other):
      return float("inf")
  return worst


def check(
    modules: Dict[str, object],
    record_path: str,
    work_dir: str,
    side_python: Optional[str] = None,
    side_script: Optional[str] = None,
    saved: Optional[Dict[str, str]] = None,
) -> Dict[str, Dict]:
  """Saves each module under `work_dir` and takes the SavedModels `saved`
  ({kind: path}) as they are; {kind: {"ops": [problem lines],
  "difference": the largest difference of the side environment's answers
  from ours (with `side_python`)}}."""
  known = graph_ops.read_record(record_path)
  where = f"TensorFlow {known['tensorflow']}"
  paths, report = dict(saved or {}), {}
  for kind, module in sorted(modules.items()):
    path = os.path.join(work_dir, kind)
    tf.saved_model.save(module, path, signatures=module.signatures())
    paths[kind] = path
  for kind, path in sorted(paths.items()):
    used = graph_ops.saved_model_ops(path)
    report[kind] = {"ops": graph_ops.unknown(used, known, where)}
  if side_python is None:
    return report
  requests = _requests(paths)
  # local-only: the files exchanged with the side process, removed after.
  with tempfile.TemporaryDirectory() as tmp:
    request_file = os.path.join(tmp, "requests.json")
    answer_file = os.path.join(tmp, "answers.json")
    # local-only: in the scratch directory above.
    with open(request_file, "w", encoding="utf-8") as f:
      json.dump(requests, f)
    run = subprocess.run(
        [
            side_python,
            side_script,
            f"--answer={request_file}",
            f"--out={answer_file}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode != 0:
      raise RuntimeError(
          "the side environment failed: "
          + (run.stderr.strip().splitlines() or ["no output"])[-1]
      )
    # local-only: in the scratch directory above.
    with open(answer_file, encoding="utf-8") as f:
      side = json.load(f)
  ours = _answer(requests)
  for r, mine, theirs in zip(requests, ours, side["answers"]):
    entry = report[r["kind"]]
    entry.setdefault("difference", 0.0)
    entry["difference"] = max(entry["difference"], _difference(mine, theirs))
    entry.setdefault("signatures", []).append(r["signature"])
  report["side"] = {
      "tensorflow": side["tensorflow"],
      "tensorflow_text": side["tensorflow_text"],
  }
  return report
