"""The embedded CPU target: real vLLM-Omni served on vLLM's CPU build with tiny checkpoints.

This package owns the environment fixes that make the CPU install importable (``envfix``), the
out-of-tree CPU OmniPlatform plugin (``plugin`` is the light entry point, ``platform`` and
``attention`` are loaded only inside vLLM processes) and the bundled tiny checkpoints
(``catalog`` and ``builders``). Importing this package never imports torch.
"""
