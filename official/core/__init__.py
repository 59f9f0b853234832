"""Task abstraction and the generic training loop.

  task               Task: model, inputs, loss, metrics, initialize
  trainer            Trainer: the one loop (and the one `strategy.run`)
  trainer_config     TrainerConfig: steps, intervals, precision, XLA
  checkpoints        checkpoint housekeeping and the one reading of a
                     checkpoint path
  checkpoint_damage  which file of a checkpoint is truncated or corrupt
  input_pipeline     the resumable tf.data tail of every training stream
  model_config_file  MODEL_DIR/model_config.json
  progress           progress lines: counts, rate, ETA
"""
