"""The ``offload-sweep`` gate: offload points of one model launched, measured and held to the
resident reference, published as a raw table with the latency–memory frontier."""

from omniqual.checks.offload_sweep.check import OffloadSweepCheck

__all__ = ["OffloadSweepCheck"]
