"""Pretraining: the task, its two readers and the training library.

  training        pretrain(): gin, task, strategy and trainer for
                  `python -m albert.run_pretraining`; evaluate_pretrained,
                  write_metrics
  task            PretrainTask: MLM + SOP loss, metrics, inputs, warm start
  data            the examples reader (the original's TFRecords), the file
                  order every training stream shares, model batches
  documents_data  the documents reader: paired and masked as it reads
  pairing_ops     its pairs in TensorFlow ops (PairingOps)
  masking_ops     its masks in TensorFlow ops (MaskingOps), the hash RNG

The seekable order both readers' training streams follow is
official/core/seekable_stream.py; the data they read comes from
albert/pretraining_data (tools/create_pretraining_data.py).
"""
