"""Deterministic builders of the tiny random-weight checkpoints bundled with the embedded target.

Each module declares a ``CheckpointBuilder`` whose recipe (configs, seed, version) is plain data;
torch, diffusers and transformers are imported only when a checkpoint is written or checked.
"""
