"""Correctness evidence (SKILL Gate 1.2 and the parity gate): served output held to the official
implementation (``reference*``) and a candidate deployment held to its baseline
(``candidate*``), over one shared request set (:mod:`omniqual.checks.parity.requests`)."""
