"""Fine-tuning tasks: GLUE, SQuAD and RACE (paper section 4.2-4.3)."""
