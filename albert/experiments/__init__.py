"""The paper's ablations at CPU scale (`tools/run_ablation.py`) and plots.

  ablation      Ablation: data, training, evaluation and report of one
                experiment, resumable step by step
  variants      EXPERIMENTS: the models each experiment trains (paper Tables
                3-5)
  split_corpus  training and held-out documents
  report        results.md (Table 4 / 5 layout) and the curve plots
  curves        TensorBoard scalars read back, and PNG plots (also the demo's)
"""
