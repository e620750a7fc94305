"""The soak gate: one room per concern. ``gate`` runs the check, ``phases`` drives calibration,
the saturation search and the open-loop phases, ``judge`` turns each phase into findings,
``watch`` samples the server's resources and health, ``resources`` judges them, ``series``
keeps the per-phase series for the report, and ``params`` is the gate spec's ``params`` block.
The abort gate reuses ``watch`` and ``resources``."""

from omniqual.checks.soak.gate import SoakCheck
from omniqual.checks.soak.params import SoakParams

__all__ = ["SoakCheck", "SoakParams"]
