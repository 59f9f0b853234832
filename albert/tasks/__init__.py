"""Fine-tuning tasks: GLUE, SQuAD and RACE."""
