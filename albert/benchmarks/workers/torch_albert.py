"""Worker: transformers' AlbertModel of the same sizes, token ids in.

  python -m albert.benchmarks.workers.torch_albert VOCAB_SIZE E H NUM_HEADS \
      F NUM_LAYERS NUM_HIDDEN_GROUPS INNER_GROUP_NUM SEQ_LENGTH BATCH_SIZE \
      AUTOCAST

Random weights, no dropout, gelu_new; AUTOCAST is a torch dtype name run
under CPU autocast, or "none". info: "threads" (PyTorch's) and "autocast".
"""

import contextlib
import sys

from albert.benchmarks.workers import serve_loop


def main(argv):
  # Imported here: torch and transformers are test-only peers, which no
  # module of the package imports (tests/test_packaging.py).
  import torch  # pylint: disable=import-outside-toplevel
  import transformers  # pylint: disable=import-outside-toplevel

  v, e, h, n, f, layers, groups, inner, seq, batch = map(int, argv[1:11])
  autocast = argv[11]
  config = transformers.AlbertConfig(
      vocab_size=v,
      embedding_size=e,
      hidden_size=h,
      num_hidden_layers=layers,
      num_attention_heads=n,
      intermediate_size=f,
      num_hidden_groups=groups,
      inner_group_num=inner,
      hidden_act="gelu_new",
      hidden_dropout_prob=0.0,
      attention_probs_dropout_prob=0.0,
  )
  model = transformers.AlbertModel(config).eval()
  ids = {b: torch.randint(5, v, (b, seq)) for b in (1, batch)}

  def precision_scope():
    if autocast == "none":
      return contextlib.nullcontext()
    return torch.autocast("cpu", dtype=getattr(torch, autocast))

  def run(batch_size):
    with torch.no_grad(), precision_scope():
      model(input_ids=ids[batch_size])

  info = {"threads": torch.get_num_threads(), "autocast": autocast}
  serve_loop.serve_batches(run, info, batch)


if __name__ == "__main__":
  main(sys.argv)
