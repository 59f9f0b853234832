"""docs/tf_serving.md's gRPC client, run as written (only the address changed)
in a fresh process against a stand-in for TF Serving on 127.0.0.1: a gRPC
`PredictionService` of tensorflow-serving-api's own protos that answers
`Predict` with the SavedModel's signature, as the server does. (No TF
Serving binary runs here; what was checked against its TensorFlow is
test_serving_modules.py's.)"""

from concurrent import futures
import re
import sys

import grpc
import pytest
import tensorflow as tf
import tf_keras
from tensorflow_serving.apis import predict_pb2
from tensorflow_serving.apis import prediction_service_pb2_grpc

from albert.finetuning.sentence_classification import GlueServingModule
from albert.modeling.classifier import AlbertClassifier
from albert.serving.wordpiece_preprocessor import make_preprocessor
from tests import helpers
from tests.albert.serving.conftest import CONFIG

LABELS = ["asyncio", "email", "logging", "json"]


class _PredictionService(prediction_service_pb2_grpc.PredictionServiceServicer):
  """TF Serving's `Predict`: a model by name, a signature by name."""

  def __init__(self, models):
    self.models = models

  def Predict(self, request, context):  # noqa: N802 (the gRPC method's name)
    loaded = self.models.get(request.model_spec.name)
    if loaded is None:
      context.abort(grpc.StatusCode.NOT_FOUND, "no such model")
    fn = loaded.signatures[
        request.model_spec.signature_name or "serving_default"
    ]
    outputs = fn(**{k: tf.make_ndarray(v) for k, v in request.inputs.items()})
    response = predict_pb2.PredictResponse()
    response.model_spec.CopyFrom(request.model_spec)
    for name, value in outputs.items():
      response.outputs[name].CopyFrom(tf.make_tensor_proto(value.numpy()))
    return response


@pytest.fixture(scope="module")
def server(spm_model, tmp_path_factory):
  tf_keras.utils.set_random_seed(5)
  classifier = AlbertClassifier.from_config_object(CONFIG, num_classes=4)
  classifier(classifier.dummy_inputs())
  module = GlueServingModule(
      classifier,
      make_preprocessor(spm_model_file=str(spm_model), seq_length=24),
      labels=LABELS,
      pair=False,
      input_names=("text", "text_pair"),
  )
  path = str(tmp_path_factory.mktemp("tf_serving") / "mydata")
  tf.saved_model.save(module, path, signatures=module.signatures())
  grpc_server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
  prediction_service_pb2_grpc.add_PredictionServiceServicer_to_server(
      _PredictionService({"mydata": tf.saved_model.load(path)}), grpc_server
  )
  port = grpc_server.add_insecure_port("127.0.0.1:0")
  grpc_server.start()
  yield port
  grpc_server.stop(None)


def test_docs_grpc_client_gets_a_label(server):
  with open(f"{helpers.REPO}/docs/tf_serving.md", encoding="utf-8") as f:
    blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
  (block,) = [b for b in blocks if "PredictionServiceStub" in b]
  assert '"localhost:8500"' in block
  script = block.replace('"localhost:8500"', f'"127.0.0.1:{server}"')
  run = helpers.run([sys.executable, "-c", script], timeout=300)
  assert run.returncode == 0, run.stderr[-3000:]
  (printed,) = run.stdout.strip().splitlines()[-1:]
  assert re.fullmatch(r"\[b'(%s)'\]" % "|".join(LABELS), printed), printed
