"""The perf gate: one room per concern. ``gate`` runs the check over its server launches,
``work`` runs one repetition of the fixed work and computes its metrics, ``judge`` finds the
baseline that may judge a run, ``host`` reads the measuring host and says what it lets the
baseline do, ``gpu`` records a GPU row's clocks instead, ``outcome`` decides and records the
result, ``record`` writes the raw result JSON, ``upstream`` reads the work from a vLLM-Omni perf
config, and ``params`` is the gate spec's ``params`` block. The statistics are
:mod:`omniqual.loadgen.regression`; the baseline files :mod:`omniqual.specs.perf_baseline`."""

from omniqual.checks.perf.gate import PerfCheck
from omniqual.checks.perf.params import PerfParams

__all__ = ["PerfCheck", "PerfParams"]
