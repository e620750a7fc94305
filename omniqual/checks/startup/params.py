"""The start-up gate's ``params`` block: where the row's contract (its known-good request) is,
how soon after /health first says ready that request must be answered, how many warm requests
the first is held against and how much slower than their median it may be."""

from pydantic import Field, model_validator

from omniqual.checks.base import CheckParams


class StartupParams(CheckParams):
    contracts_dir: str = Field(
        default="gates/contracts", description="The row's contract: its probe is the request."
    )
    first_request_bound_s: float = Field(
        default=120.0, gt=0,
        description="From /health's first 200 to the known-good request's answer, at most.",
    )  # fmt: skip
    warm_requests: int = Field(
        default=5, ge=1, le=50, description="The same request again, one at a time, after it."
    )
    min_warm_samples: int = Field(
        default=3, ge=1, description="Answered warm requests the ratio needs (fewer: invalid)."
    )
    max_first_to_warm_ratio: float = Field(
        default=3.0, gt=1, description="The first request's latency over the warm median."
    )
    request_timeout_s: float = Field(default=120.0, gt=0, description="Each warm request.")
    job_timeout_s: float = Field(default=600.0, gt=0, description="An async video job's end.")
    poll_interval_s: float = Field(default=0.25, gt=0)
    tail_lines: int = Field(
        default=8, ge=1, le=200, description="Log lines a start-up that never ends is named by."
    )

    @model_validator(mode="after")
    def _samples_within_requests(self) -> "StartupParams":
        if self.min_warm_samples > self.warm_requests:
            raise ValueError(
                f"min_warm_samples ({self.min_warm_samples}) exceeds warm_requests "
                f"({self.warm_requests}): the ratio could never be judged"
            )
        return self
