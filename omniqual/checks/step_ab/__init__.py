"""The step-ab gate: step execution against a matched request-mode control. ``gate`` launches
both arms and decides, ``trial`` runs one repetition of the declared hypothesis's work on one
arm, ``params`` is the gate spec's ``params`` block. The statistics are
:mod:`omniqual.loadgen.regression`."""

from omniqual.checks.step_ab.gate import StepAbCheck
from omniqual.checks.step_ab.params import StepAbParams

__all__ = ["StepAbCheck", "StepAbParams"]
