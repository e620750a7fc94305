"""The fault-injection gate: one room. ``cases`` says what is injected where, ``params`` is the
gate spec's block, ``driver`` sends into an armed fault and watches the server afterwards,
``judge`` decides what that means (``jobs`` and ``judge_jobs`` the same for an async job row),
``serving`` brings up a server carrying the injector, ``control`` arms and reads it (through
its files or ``omniqual agent``), ``peers`` holds the peers to their solo same-seed outputs,
``cancel_points`` (judged by ``judge_held``) cancels a request held at a point of its life, and
``gate`` runs the cases and records them."""

from omniqual.checks.fault_injection.gate import FaultInjectionCheck
from omniqual.checks.fault_injection.params import FaultInjectionParams

__all__ = ["FaultInjectionCheck", "FaultInjectionParams"]
