"""What importing the package sets before TensorFlow loads
(official/__init__.py): oneDNN kernels and `tf.keras` as the Keras 2 API,
each unless the environment decides."""

import json

from tests import helpers

_PROBE = """
import json, sys
import albert
import tensorflow as tf
import tf_keras
print(json.dumps({
    "onednn": __import__("os").environ["TF_ENABLE_ONEDNN_OPTS"],
    "tf_keras_is_tf_keras": tf.keras.layers.Dense is tf_keras.layers.Dense,
    "keras_3_loaded": "keras.src" in sys.modules,
}))
"""


def _probe(**env):
  base = {
      k: v
      for k, v in helpers.ENV.items()
      if k not in ("TF_USE_LEGACY_KERAS", "TF_ENABLE_ONEDNN_OPTS")
  }
  run = helpers.run(["-c", _PROBE], env=dict(base, **env), timeout=300)
  assert run.returncode == 0, run.stderr[-3000:]
  return json.loads(run.stdout.strip().splitlines()[-1])


def test_keras_2_and_onednn_unless_the_environment_decides():
  # By default: no Keras 3 import at `import tensorflow` (its start-up
  # cost), and tf.keras is the tf_keras the package is written in.
  assert _probe() == {
      "onednn": "1",
      "tf_keras_is_tf_keras": True,
      "keras_3_loaded": False,
  }
  # The environment's choice wins: TensorFlow's own default is Keras 3.
  assert _probe(TF_USE_LEGACY_KERAS="0", TF_ENABLE_ONEDNN_OPTS="0") == {
      "onednn": "0",
      "tf_keras_is_tf_keras": False,
      "keras_3_loaded": True,
  }
