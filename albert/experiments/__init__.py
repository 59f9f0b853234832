"""The paper's ablations at CPU scale (`tools/run_ablation.py`) and plots,
and the drivers of docs/experiments.md's other measurements
(`python -m albert.experiments.NAME`).

  ablation            Ablation: data, training, evaluation and report of one
                      experiment, resumable step by step
  variants            EXPERIMENTS: the models each experiment trains (paper
                      Tables 3-5)
  split_corpus        training and held-out documents
  report              results.md (Table 4 / 5 layout) and the curve plots
  curves              TensorBoard scalars read back, and PNG plots (also the
                      demo's)
  squad_context_mask  the SQuAD v1.1 head with and without its context mask,
                      per seed
  synthetic_squad     a learnable synthetic SQuAD and its tiny model (also
                      the SQuAD tests')
  dynamic_masking     pretraining from documents (masked as read) against
                      from examples, per seed
  startup             a short run's time in fresh processes and AutoGraph's
                      share of it, for checkouts in turn
"""
