"""Task abstraction and the generic training loop.

  task               Task: model, inputs, loss, metrics, initialize
  trainer            Trainer: the loops (no step waits on the host)
  replica_steps      ReplicaSteps: what one replica runs; what XLA compiles
  loop_totals        LoopTotals: a loop's loss kept on the devices
  compiled_loops     the train and eval loops as tf.while_loops
  trainer_config     TrainerConfig: steps, intervals, precision, XLA
  preemption         SignalWatch: SIGTERM / SIGINT read between loops
  run_lock           one run per model directory
  checkpoints        checkpoint housekeeping and the one reading of a
                     checkpoint path
  checkpoint_damage  which file of a checkpoint is truncated or corrupt
  best_checkpoint    evaluate during training, keep the best, stop early
  input_pipeline     the tf.data tail of every stream: batches, resume,
                     static-shape evaluation batches
  seekable_stream    a training order that a resume enters at its saved
                     position (epochs, file groups, windows)
  model_config_file  MODEL_DIR/model_config.json
  summaries          TensorBoard scalars, held until the first checkpoint
  export_base        ExportModule: serving modules without Keras' metadata
  graph_ops          a graph's ops and attributes against another
                     TensorFlow's (TF Serving's)
  progress           progress lines: counts, rate, ETA
  host               the cores this process may use (worker pools, tf.data
                     interleaves)
"""
