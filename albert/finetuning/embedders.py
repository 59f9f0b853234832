"""Opening an embedder by path, whatever wrote it: `open_embedder`.

A sentence_embedding fine-tuning's model directory (its dev-best checkpoint
and its best seed's), an exported SavedModel with an `embed` signature, or
a pretrained or imported model directory (`albert.serving.embedding`).
What albert-embed and the embedding benchmark read.
"""

from albert.finetuning import training
from albert.finetuning.own_data import sentence_embedding
from albert.serving import embedding
from official.errors import InputError


def open_embedder(path: str, checkpoint=None):
  """An object with `embed(texts, batch_size) -> [N, H]` and `dim`.

  Raises:
    InputError: `path` is a fine-tuned model of another task.
  """
  if training.is_finetuned_dir(path):
    task, model, _ = training.load_trained(
        model_dir=path, checkpoint=checkpoint
    )
    if not isinstance(task, sentence_embedding.SentenceEmbeddingTask):
      raise InputError(
          f"{path} holds a fine-tuned {task.name} model, not an embedder; "
          "give a model trained with gin/finetune/sentence_embedding.gin, "
          "an imported embedding model or a pretrained model directory"
      )
    return sentence_embedding.trained_embedder(task, model)
  return embedding.open_embedder(path, checkpoint)
