"""The perf-ab gate: the row's recipe against a reference launched beside it on the same host,
the same fixed work alternating between them. ``gate`` launches both arms and decides,
``pairs`` holds the paired rule, ``params`` is the gate spec's ``params`` block."""

from omniqual.checks.perf_ab.gate import PerfAbCheck
from omniqual.checks.perf_ab.params import PerfAbParams

__all__ = ["PerfAbCheck", "PerfAbParams"]
