"""`EncoderWithHeads`: a Keras model made of an `AlbertEncoder` and task heads.

What the pretrainer and the fine-tuning models share: building on a fresh
encoder of an `AlbertConfig` with every weight created, the `encoder`
attribute (so checkpoints hold it at `model/encoder/...` for every task and
the encoder of any of them restores into any other), and `get_config` /
`from_config` that carry the encoder's config.
"""

from typing import Any, Dict

import tf_keras

from albert.modeling.config import AlbertConfig
from albert.modeling.encoder import AlbertEncoder


class EncoderWithHeads(tf_keras.Model):
  """Base class; subclasses take the encoder first and keyword options after.

  Subclasses implement `call`, `dummy_inputs()` (inputs that build every
  weight) and `head_config()` (their keyword options for `get_config`).
  Fine-tuned models name their head in `head_kind` (one of
  `albert.checkpoint_conversion.finetuned_names.KINDS`): what the converters
  and the TFLite export read to know the head's layout.
  """

  head_kind = None

  @classmethod
  def from_config_object(cls, config: AlbertConfig, **kwargs):
    """The model on a fresh encoder of `config`, every weight created.

    The one construction used by training and checkpoint loading, so that
    variables (and optimizer slots, which follow their order) line up.
    """
    model = cls(AlbertEncoder.from_config_object(config), **kwargs)
    model(model.dummy_inputs())
    return model

  def encoder_training(self, training):
    """The `training` argument for the encoder: False once the encoder is
    frozen (`encoder.trainable = False`, fine-tuning's freeze_encoder), so
    its dropout is off and the heads learn from fixed features."""
    return training if self.encoder.trainable else False

  def head_config(self) -> Dict[str, Any]:
    """The subclass's keyword options, as `get_config` returns them."""
    return {}

  def get_config(self):
    return {
        "name": self.name,
        "encoder": self.encoder.get_config(),
        **self.head_config(),
    }

  @classmethod
  def from_config(cls, config, custom_objects=None):
    del custom_objects
    config = dict(config)
    encoder = AlbertEncoder.from_config(config.pop("encoder"))
    return cls(encoder, **config)
