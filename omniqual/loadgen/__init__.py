"""Open-loop load generation and honest statistics; no HTTP inside (a ``Send`` does the I/O).

``schedule`` draws seeded arrival times, ``workload`` assigns a weighted request mix to them,
``issuer`` sends them on time through a ``Send`` and records every request (``records``),
``stats``/``sufficiency``/``trend`` summarize a run with sample-count-aware verdicts, and
``saturation`` searches for the highest rate that meets a latency SLO.
"""
