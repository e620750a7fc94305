"""The step-ab gate's ``params`` block: the predeclared hypothesis, its success threshold and
confidence, the work a repetition does (a long and a short shape, a cut or a mixed arrival), and
how many launches each arm gets and repetitions each launch.

Hypotheses (each names one figure, lower is better, measured the same way on both arms):

* ``cancel_frees_within_step``: a long request is cut by the client after ``cut_after_s`` while
  a short request waits behind it (sent ``queue_after_s`` after the long one). The figure is the
  short request's completion measured from the cut, averaged over ``trials`` cuts. Step mode can
  abort the long request at its next step boundary; request mode needs the rest of it.
* ``short_request_p95``: ``requests`` arrivals (Poisson at ``arrival_rps``, the gate's seed) mix
  short and long shapes (``long_fraction`` of them long); the figure is the p95 latency of the
  short ones, from their scheduled arrival.

The control is the row's recipe with ``execution_flags`` removed, nothing else changed.
"""

from typing import Literal

from pydantic import Field, model_validator

from omniqual.checks.base import CheckParams
from omniqual.checks.soak.params import ShapeSpec

Hypothesis = Literal["cancel_frees_within_step", "short_request_p95"]


class StepAbParams(CheckParams):
    hypothesis: Hypothesis
    min_improvement: float = Field(
        default=0.2, gt=0, lt=1,
        description="The relative drop of the figure (step against request mode) the hypothesis "
        "claims; it is met only when the whole confidence interval lies beyond it.",
    )  # fmt: skip
    confidence: float = Field(default=0.95, gt=0.5, lt=1)
    short: ShapeSpec = ShapeSpec(name="short", width=64, height=64, steps=2)
    long: ShapeSpec = ShapeSpec(name="long", width=64, height=64, steps=24)
    cut_after_s: float = Field(default=1.0, gt=0, description="cancel_frees_within_step.")
    queue_after_s: float = Field(default=0.3, ge=0, description="cancel_frees_within_step.")
    trials: int = Field(default=3, ge=1, description="Cuts per repetition.")
    requests: int = Field(default=12, ge=2, description="short_request_p95: arrivals.")
    arrival_rps: float = Field(default=1.0, gt=0, description="short_request_p95.")
    long_fraction: float = Field(default=0.25, gt=0, lt=1, description="short_request_p95.")
    seed: int = 0
    warmup_repetitions: int = Field(default=1, ge=0, description="Per arm and launch, discarded.")
    repetitions: int = Field(
        default=3, ge=1,
        description="Per arm and launch: measured passes, step and control alternating; the "
        "launch's figure is their mean.",
    )  # fmt: skip
    launches: int = Field(
        default=3, ge=2,
        description="Launch rounds before the first decision, each starting both arms afresh: "
        "launches of one server differ more than passes on one launch do, and only a spread of "
        "launch figures shows by how much.",
    )  # fmt: skip
    max_launches: int = Field(
        default=4, ge=2,
        description="While the interval straddles the threshold, one more launch round at a "
        "time, within the gate's budget.",
    )  # fmt: skip
    execution_flags: tuple[str, ...] = Field(
        default=("step-execution",), min_length=1,
        description="The serve flags that switch step execution on; the control drops them.",
    )  # fmt: skip
    request_timeout_s: float = Field(default=120.0, gt=0)
    startup_deadline_s: float = Field(default=240.0, gt=0)

    @model_validator(mode="after")
    def _consistent(self) -> "StepAbParams":
        if self.max_launches < self.launches:
            raise ValueError("max_launches must be at least launches")
        if self.queue_after_s >= self.cut_after_s:
            raise ValueError("queue_after_s must come before cut_after_s (the short request "
                             "waits behind the long one when it is cut)")  # fmt: skip
        return self
