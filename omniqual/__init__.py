"""omniqual: evidence-backed qualification of vLLM-Omni diffusion deployments.

Importing the package has no side effects; the CLI lives in :mod:`omniqual.cli`.
"""

__version__ = "0.1.0"
