"""The perf-ab gate's ``params`` block: the perf gate's fixed work (shapes, requests, seeds,
concurrency, repetitions, launch rounds), the reference it is measured against and the
regression the owner tolerates."""

from pydantic import Field

from omniqual.checks.perf.params import PerfParams


class PerfAbParams(PerfParams):
    reference_recipe: str | None = Field(
        default=None,
        description="Id of the launch recipe (in the project's runners/) the row's recipe is "
        "measured against: the same model (both arms run on the row's checkpoint) on the "
        "release, flags or environment a change is measured from. "
        "None: the row's own recipe, launched twice (an A/A run: whether this host can tell "
        "the threshold apart at all).",
    )  # fmt: skip
    threshold: float = Field(
        default=0.15, gt=0, lt=1,
        description="The relative slowdown of the mean latency against the reference that "
        "counts as a regression.",
    )  # fmt: skip
    launches: int = Field(default=3, ge=2, description="Launch rounds: both arms afresh.")
    startup_deadline_s: float = Field(default=240.0, gt=0)
