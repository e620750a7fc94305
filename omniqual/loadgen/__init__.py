"""loadgen layer."""
