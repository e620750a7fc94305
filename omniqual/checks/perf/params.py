"""The perf gate's ``params`` block: the fixed work of one repetition (shapes, steps, seeds,
request count, concurrency or arrival rate), how many repetitions and fresh server launches, and
where baselines live.

Every repetition sends exactly the same requests (the seed fixes each request's seed and the
shape each slot gets), so repetitions differ only by the server's timing. The work is hashed
(:func:`workload_sha256`): a baseline judges only the work it was measured on. A vLLM-Omni perf
config (``vllm_omni_config``, one of its benchmark cases) may state the work instead.
"""

import hashlib
import json

from pydantic import Field, model_validator

from omniqual.checks.base import CheckParams
from omniqual.checks.soak.params import ShapeSpec

METRICS = ("latency_mean", "latency_median", "latency_p95", "latency_p99", "throughput_qps",
           "duration")  # fmt: skip
"""Per-repetition metrics a baseline may name (vLLM-Omni's diffusion-benchmark field names)."""


class PerfParams(CheckParams):
    shapes: tuple[ShapeSpec, ...] = Field(
        default=(ShapeSpec(name="small", width=64, height=64, steps=2),), min_length=1
    )
    requests: int = Field(default=20, ge=2, description="Requests per repetition.")
    concurrency: int = Field(default=1, ge=1, description="Requests in flight (closed loop).")
    arrival_rps: float | None = Field(
        default=None, gt=0,
        description="Open loop at this constant rate instead (latency from the schedule).",
    )  # fmt: skip
    seed: int = 0
    warmup_repetitions: int = Field(default=1, ge=0, description="Run and discarded.")
    min_repetitions: int = Field(default=3, ge=2)
    max_repetitions: int = Field(
        default=8, ge=2,
        description="Ceiling of the sequential rule: repetitions are added one at a time while "
        "the interval straddles the threshold, up to this many and within the gate's budget.",
    )  # fmt: skip
    launches: int = Field(
        default=1, ge=1,
        description="Fresh server launches per run when the gate launches the server itself (a "
        "launch recipe): each gets the warm-up and min_repetitions, and the run is judged on "
        "the mean of the launch means, whose term shrinks by sqrt(launches). A deployment "
        "given by URL is one launch.",
    )  # fmt: skip
    max_launches: int | None = Field(
        default=None, ge=1,
        description="More launches, one at a time, while the verdict is undecided and the next "
        "fits the budget, up to this many (default: launches).",
    )  # fmt: skip
    confidence: float = Field(default=0.95, gt=0.5, lt=1)
    request_timeout_s: float = Field(default=120.0, gt=0)
    baselines_dir: str = Field(default="gates/perf-baselines",
                               description="Relative to the project root.")  # fmt: skip
    host_speed_tolerance: float | None = Field(
        default=None, gt=0, lt=1,
        description="How far the host's reference workload may move between the first and "
        "second half of the run before the run is invalid (one ratio to the baseline's reading "
        "cannot describe a host that changed under it); default the baseline's threshold (a "
        "host that moved that much could move the verdict by itself; the reference workload "
        "itself varies by a few percent between readings on a quiet shared host). A host "
        "steadily slower or faster than the baseline's widens the interval instead.",
    )  # fmt: skip
    shared_tolerance: float = Field(
        default=0.05, ge=0, lt=1,
        description="How much of the host's CPU time processes other than the server's tree and "
        "the measuring process may take during the repetitions before the host counts as "
        "shared (invalid): on a 2-core guest, idle servers of other launches beside the "
        "measured one slowed it by a fifth.",
    )  # fmt: skip
    steal_tolerance: float = Field(
        default=0.02, ge=0, lt=1,
        description="How much more of the CPU time hypervisor steal may take during the "
        "repetitions than when the baseline was set (without a baseline: at all) before the "
        "host counts as contended.",
    )  # fmt: skip
    vllm_omni_config: str | None = Field(
        default=None, description="A vLLM-Omni perf config JSON (relative to the project root)."
    )
    vllm_omni_case: str | None = Field(
        default=None,
        description="`test_name/benchmark name` in that config (default: its first case).",
    )

    @property
    def launch_ceiling(self) -> int:
        return self.max_launches if self.max_launches is not None else self.launches

    @model_validator(mode="after")
    def _repetitions_ordered(self) -> "PerfParams":
        if self.max_repetitions < self.min_repetitions:
            raise ValueError("max_repetitions must be at least min_repetitions")
        if self.max_launches is not None and self.max_launches < self.launches:
            raise ValueError("max_launches must be at least launches")
        if self.vllm_omni_case is not None and self.vllm_omni_config is None:
            raise ValueError("vllm_omni_case needs vllm_omni_config")
        return self


def workload_sha256(params: PerfParams, endpoint: str) -> str:
    """The identity of one repetition's work: what a baseline's values belong to."""
    work = {"endpoint": endpoint, "shapes": [s.model_dump(mode="json") for s in params.shapes],
            "requests": params.requests, "concurrency": params.concurrency,
            "arrival_rps": params.arrival_rps, "seed": params.seed}  # fmt: skip
    return hashlib.sha256(json.dumps(work, sort_keys=True).encode()).hexdigest()
